/** The state URL: its parts, its refusals (never showing the password) and libpq's TLS modes as node-postgres options. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStateUrl, tlsOptions } from '../../src/config/state-url.js';
import { scratchDirSync } from '../helpers/scratch.js';

const CA = join(scratchDirSync(), 'ca.pem');
writeFileSync(CA, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');

describe('parseStateUrl', () => {
  it('splits a URL and shows it without its password', () => {
    const url = parseStateUrl('postgresql://team:s3cret%40pw@db.example.com:6543/sales?sslmode=require');
    expect(url).toMatchObject({ host: 'db.example.com', port: 6543, user: 'team', password: 's3cret@pw' });
    expect(url.database).toBe('sales');
    expect(url.shown).toBe('postgresql://team:***@db.example.com:6543/sales?sslmode=require');
  });

  it('refuses what it cannot use, never echoing the password', () => {
    for (const text of [
      'mysql://team:hunter22@db/x',
      'postgres://team:hunter22@db/x?sslmode=sometimes',
      'postgres://team:hunter22@db/x?application_name=x',
      'postgres://:hunter22@db/x',
    ]) {
      expect(() => parseStateUrl(text)).toThrow();
      try {
        parseStateUrl(text);
      } catch (error) {
        expect((error as Error).message).not.toContain('hunter22');
      }
    }
  });

  it('takes ?password= (as libpq does) and shows it as ***, in the URL and in every refusal', () => {
    const url = parseStateUrl('postgres://team@db.example.com/sales?password=s3cret%26pw&sslmode=require');
    expect(url).toMatchObject({ user: 'team', password: 's3cret&pw' });
    expect(url.shown).toBe('postgres://team@db.example.com/sales?password=***&sslmode=require');
    for (const text of [
      'postgres://team@db.example.com/sales?password=s3cret&sslpassword=s3cret',
      'postgres://team@db.example.com/sales?password=s3cret&sslmode=bogus',
      'postgres://team@db.example.com:99999/sales?password=s3cret',
      'host=db.example.com password=s3cret',
    ]) {
      let message = '';
      try {
        parseStateUrl(text);
      } catch (error) {
        message = `${(error as Error).message} ${(error as { hint?: string }).hint ?? ''}`;
      }
      expect(message, text).toMatch(/state URL/);
      expect(message, text).not.toContain('s3cret');
    }
  });

  it('reads a Unix socket directory from ?host= as this machine', () => {
    expect(parseStateUrl('postgresql://team@/sales?host=/var/run/postgresql')).toMatchObject({
      host: '/var/run/postgresql',
      loopback: true,
      sslmode: 'disable',
    });
  });
});

describe('TLS as libpq does it', () => {
  const tls = (query: string, host = 'db.example.com') => tlsOptions(parseStateUrl(`postgresql://u@${host}/d${query}`));

  it('verify-full is the default off this machine; plaintext only on loopback or when written out', () => {
    expect(tls('')).toEqual({ rejectUnauthorized: true });
    expect(tls('', '127.0.0.1')).toBe(false);
    expect(tls('?sslmode=disable')).toBe(false);
  });

  it('require encrypts without checking, unless a root certificate is given (then as verify-ca)', () => {
    expect(tls('?sslmode=require')).toEqual({ rejectUnauthorized: false });
    const withCa = tls(`?sslmode=require&sslrootcert=${CA}`);
    expect(withCa).toMatchObject({ rejectUnauthorized: true, ca: expect.stringContaining('BEGIN CERTIFICATE') });
    expect(withCa && withCa.checkServerIdentity?.()).toBeUndefined();
    expect(withCa && 'checkServerIdentity' in withCa).toBe(true);
  });

  it('verify-ca checks the chain, not the name; verify-full both', () => {
    const ca = tls(`?sslmode=verify-ca&sslrootcert=${CA}`);
    expect(ca && ca.rejectUnauthorized).toBe(true);
    expect(ca && 'checkServerIdentity' in ca).toBe(true);
    const full = tls(`?sslmode=verify-full&sslrootcert=${CA}`);
    expect(full && full.rejectUnauthorized).toBe(true);
    expect(full && 'checkServerIdentity' in full).toBe(false);
  });

  it('prefer and allow stay on TLS (node-postgres cannot fall back), unchecked', () => {
    expect(tls('?sslmode=prefer')).toEqual({ rejectUnauthorized: false });
    expect(tls('?sslmode=allow')).toEqual({ rejectUnauthorized: false });
  });

  it('an unreadable sslrootcert is exit 2 naming the file', () => {
    expect(() => tls('?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem')).toThrow(
      /sslrootcert \/nonexistent\/ca.pem/,
    );
  });
});

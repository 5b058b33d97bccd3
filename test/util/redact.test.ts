import { describe, expect, it } from 'vitest';
import { redact, redactDeep, redactSecret, withoutPassword } from '../../src/util/redact.js';

describe('redactSecret', () => {
  it('shows only the last four characters', () => {
    expect(redactSecret('sk_live_0123456789abf00d')).toBe('…f00d');
  });

  it('shows nothing of a short secret', () => {
    expect(redactSecret('short-key')).toBe('…');
    expect(redactSecret('')).toBe('…');
  });
});

describe('redact', () => {
  it('removes the key in any letter case, everywhere in a JSON value', () => {
    const key = 'sk_live_AbCd1234';
    expect(redact(`unknown key ${key.toUpperCase()} or ${key.toLowerCase()} (${key})`, key)).toBe(
      'unknown key [redacted] or [redacted] ([redacted])',
    );
    expect(redactDeep({ [key]: [`x${key}`], n: 1 }, key)).toEqual({ '[redacted]': ['x[redacted]'], n: 1 });
  });

  it('treats the key as text, not a pattern', () => {
    expect(redact('a.b+c? and aXb+c?', 'a.b+c?')).toBe('[redacted] and aXb+c?');
  });
});

describe('withoutPassword', () => {
  it.for([
    ['alice:secret@host:3128', 'alice:***@host:3128'],
    ['http://alice@corp:secret@host:3128', 'http://alice@corp:***@host:3128'],
    ['http://alice:p@ssw0rd@host:3128', 'http://alice:***@host:3128'],
    ['http://alice%40corp:s%40cr%3Aet@host:3128/', 'http://alice%40corp:***@host:3128/'],
    ['HTTPS://bob:pa:ss@proxy.corp', 'HTTPS://bob:***@proxy.corp'],
    ['postgres://prospect:s3cr%2Ft@db.internal:5432/leads', 'postgres://prospect:***@db.internal:5432/leads'],
    ['postgresql://u:p@ss@db/x?sslmode=require', 'postgresql://u:***@db/x?sslmode=require'],
    ['http://proxy.corp:3128', 'http://proxy.corp:3128'],
    ['http://tokenuser@proxy.corp:3128', 'http://tokenuser@proxy.corp:3128'],
  ] as const)('%s → %s', ([url, shown]) => {
    expect(withoutPassword(url)).toBe(shown);
  });
});

describe('redact in a URL', () => {
  it('removes the key percent-encoded too', () => {
    const key = 'k3y+with/slash';
    expect(redact(`https://x/?cursor=${encodeURIComponent(key)}&b=${key}`, key)).toBe(
      'https://x/?cursor=[redacted]&b=[redacted]',
    );
  });
});

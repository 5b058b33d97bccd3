import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ledgerFileName, LocalVerificationLedger } from '../../../src/core/verification/ledger.js';
import { spendQuestion } from '../../../src/core/verification/consent.js';
import { scratchDir } from '../../helpers/scratch.js';

const LONG_AGO = new Date('2000-01-01T00:00:00Z');
const result = (email: string) => ({ email, status: 'valid', verified_at: '2026-01-02T03:04:05Z' });

describe('the verification ledger of paid results', () => {
  it('is one file per service identity and key, named by hashes: the key itself appears nowhere', () => {
    const name = ledgerFileName('https://api.example.com', 'secret-key-123');
    expect(name).toMatch(/^verify-[0-9a-f]{16}\.ndjson$/);
    expect(name).not.toContain('secret');
    expect(ledgerFileName('https://api.example.com', 'secret-key-123')).toBe(name);
    expect(ledgerFileName('https://api.example.com', 'another-key')).not.toBe(name);
    expect(ledgerFileName('https://other.example.com', 'secret-key-123')).not.toBe(name);
  });

  it('sees what another run appended since it was opened, and ignores a torn last line', async () => {
    const dir = await scratchDir();
    const mine = LocalVerificationLedger.open(dir, 'verify-x.ndjson', LONG_AGO);
    const theirs = LocalVerificationLedger.open(dir, 'verify-x.ndjson', LONG_AGO);
    theirs.put('ana@example.com', result('ana@example.com'));
    theirs.close();
    expect(mine.get('ana@example.com')).toBeUndefined();
    appendFileSync(join(dir, 'verify-x.ndjson'), '{"key":"bob@example.com","email":"bob@exa');
    mine.refresh();
    expect(mine.get('ana@example.com')?.status).toBe('valid');
    expect(mine.get('bob@example.com')).toBeUndefined();
    // The next append cuts the torn line first: the file is whole lines again.
    mine.put('cy@example.com', result('cy@example.com'));
    mine.close();
    const lines = readFileSync(join(dir, 'verify-x.ndjson'), 'utf8').split('\n');
    expect(lines.map((line) => (line ? JSON.parse(line).key : ''))).toEqual(['ana@example.com', 'cy@example.com', '']);
    expect(statSync(join(dir, 'verify-x.ndjson')).mode & 0o777).toBe(0o600);
  });

  it('lets one run at a time claim an address; the other waits for the release', async () => {
    const dir = await scratchDir();
    const first = LocalVerificationLedger.open(dir, 'verify-y.ndjson', LONG_AGO);
    const second = LocalVerificationLedger.open(dir, 'verify-y.ndjson', LONG_AGO);
    const claim = await first.claim('ana@example.com', 'key-1');
    expect(claim.token).toBe('key-1');
    let secondHasIt = false;
    const waiting = second.claim('ana@example.com', 'key-2').then((secondClaim) => {
      secondHasIt = true;
      return secondClaim;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(secondHasIt).toBe(false);
    await claim.release();
    const secondClaim = await waiting;
    expect(secondHasIt).toBe(true);
    // A call answered (or never sent) leaves no key behind: the next claimant pays with its own.
    expect(secondClaim.token).toBe('key-2');
    await secondClaim.release();
  });

  it("keeps a lost answer's Idempotency-Key with the claim, for whoever pays for the address next", async () => {
    const dir = await scratchDir();
    const first = LocalVerificationLedger.open(dir, 'verify-z.ndjson', LONG_AGO);
    const claim = await first.claim('ana@example.com', 'key-1');
    await claim.release(true);
    const second = LocalVerificationLedger.open(dir, 'verify-z.ndjson', LONG_AGO);
    const again = await second.claim('ana@example.com', 'key-2');
    expect(again.token).toBe('key-1');
    await again.release();
    // Released with an answer: the key is forgotten.
    expect((await second.claim('ana@example.com', 'key-3')).token).toBe('key-3');
  });

  it("takes over a dead process's claim with its key", async () => {
    const dir = await scratchDir();
    const ledger = LocalVerificationLedger.open(dir, 'verify-w.ndjson', LONG_AGO);
    const claimPath = join(
      dir,
      'verify-w.ndjson.claims',
      createHash('sha256').update('ana@example.com').digest('hex').slice(0, 32),
    );
    mkdirSync(dirname(claimPath), { recursive: true });
    // A pid no process has (above the kernel's pid_max), on this host: a run that crashed mid-call.
    writeFileSync(claimPath, JSON.stringify({ pid: 2 ** 22 + 1, host: hostname(), token: 'key-dead' }));
    const claim = await ledger.claim('ana@example.com', 'key-new');
    expect(claim.token).toBe('key-dead');
    await claim.release();
  });
});

describe('the spend question', () => {
  it('says the exact count with correct plurals, the cap, and who gets a short cap', () => {
    expect(spendQuestion({ addresses: 349, alreadyPaid: 100 }, 200, '--verify-budget')).toBe(
      'Verifying 349 addresses: 100 already paid for, 249 to pay for, 200 units at most (--verify-budget 200), the oldest first.',
    );
    expect(spendQuestion({ addresses: 349, alreadyPaid: 100 }, 300, '--verify-budget')).toBe(
      'Verifying 349 addresses: 100 already paid for, 249 to pay for, 249 units at most (--verify-budget 300).',
    );
    expect(spendQuestion({ addresses: 2, alreadyPaid: 1 }, undefined, undefined)).toBe(
      'Verifying 2 addresses: 1 already paid for, 1 to pay for, 1 unit.',
    );
    expect(spendQuestion({ addresses: 12_400, alreadyPaid: 0, budgetLeft: 1 }, 5, 'config verify-budget')).toBe(
      'Verifying 12,400 addresses: 0 already paid for, 12,400 to pay for, 1 unit at most (config verify-budget 5, 1 left), the oldest first.',
    );
  });
});

/**
 * The local spool of paid answers a failed store could not keep (issue 43), in process: each answer on
 * disk (0600) when append returns, a torn last line left out, and a later run that reads the spool into
 * its ledger first finds those addresses answered and pays none of them again.
 */
import { appendFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalVerificationLedger } from '../../../src/core/verification/ledger.js';
import { spentLine, verificationSnapshot } from '../../../src/core/verification/report.js';
import { AnswerSpool } from '../../../src/core/verification/spool.js';
import { newVerificationRun, Verifier } from '../../../src/core/verification/verifier.js';
import { scratchDir } from '../../helpers/cli.js';
import { verifyStub } from '../../helpers/verify-stub.js';

const address = (n: number) => `person${n}@example.com`;

describe('the spool of answers a store could not keep', () => {
  it('keeps the answers in flight when the ledger fails; the next run stores them first and pays the rest once', async () => {
    const dir = await scratchDir('spool-');
    const stub = verifyStub('ignore', () => undefined);
    // The store fails its puts (a full disk): the calls in flight when it does are answered all the same.
    const failing = Object.assign(LocalVerificationLedger.open(dir, 'verify-x.ndjson', new Date(0)), {
      put: () => Promise.reject(new Error('could not extend file: No space left on device')),
    });
    const spool = AnswerSpool.beside(dir, 'verify-x.ndjson');
    const firstRun = newVerificationRun(undefined, 4);
    const first = new Verifier(stub, { ledger: failing, spool }, firstRun, {
      concurrency: 4,
      keyScope: 'first',
    });
    await Promise.allSettled(Array.from({ length: 10 }, (_, i) => first.verify(address(i + 1), address(i + 1))));
    spool.close();
    const paidFirst = [...stub.sent];
    expect(paidFirst.length).toBeGreaterThanOrEqual(1);
    expect(statSync(spool.path).mode & 0o777).toBe(0o600);
    // Each call answered and not stored is in the spool.
    expect(
      spool
        .read()
        .answers.map((answer) => answer.key)
        .sort(),
    ).toEqual([...paidFirst].sort());
    // And the run's last line says so (one answer here, or more: the words are counted either way).
    const answers = `${paidFirst.length} answer${paidFirst.length === 1 ? '' : 's'}`;
    expect(spentLine(verificationSnapshot(firstRun), 'team', firstRun.spooled)).toMatch(
      new RegExp(
        `kept in the team store: .*, ${answers} the store could not take in the local spool, which the next run reads first\\.$`,
      ),
    );

    // The next run: the spool into a working ledger before anything is paid, then all ten addresses.
    const ledger = LocalVerificationLedger.open(dir, 'verify-x.ndjson', new Date(0));
    const { size } = spool.read();
    expect(await spool.drainInto(ledger)).toBe(paidFirst.length);
    spool.removeIfUnchanged(size);
    expect(existsSync(spool.path)).toBe(false);
    const second = new Verifier(stub, { ledger }, newVerificationRun(undefined, 4), {
      concurrency: 4,
      keyScope: 'second',
    });
    await Promise.all(Array.from({ length: 10 }, (_, i) => second.verify(address(i + 1), address(i + 1))));
    for (let i = 1; i <= 10; i += 1) expect(stub.chargedFor(address(i)), address(i)).toBe(1);
    expect(stub.charged).toBe(10);
  });

  it('leaves out a torn last line, and is not removed when another run appended meanwhile', async () => {
    const dir = await scratchDir('spool-');
    const spool = AnswerSpool.beside(dir, 'verify-y.ndjson');
    spool.append('a@example.com', { email: 'a@example.com', status: 'valid', verified_at: '2026-01-01T00:00:00Z' });
    appendFileSync(spool.path, '{"key":"b@example.com","status":"va');
    const { answers, size } = spool.read();
    expect(answers.map((answer) => answer.key)).toEqual(['a@example.com']);
    appendFileSync(spool.path, 'lid"}\n');
    spool.removeIfUnchanged(size);
    expect(existsSync(spool.path)).toBe(true);
    expect(join(dir, 'unstored-verify-y.ndjson')).toBe(spool.path);
  });
});

/**
 * A resume after lost answers, in process: a run "killed" with calls in flight (their answers never
 * come back, as after SIGKILL) leaves the write-ahead record in its ledger, and the resume counts
 * every call sent without a kept answer against the same budget. The stub service
 * (test/helpers/verify-stub.ts) keeps the truth about money; the record is read back from disk.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalVerificationLedger } from '../../../src/core/verification/ledger.js';
import { resumeSpend } from '../../../src/core/verification/open-verifier.js';
import { verificationSnapshot } from '../../../src/core/verification/report.js';
import { newVerificationRun, Verifier } from '../../../src/core/verification/verifier.js';
import { scratchDir } from '../../helpers/scratch.js';
import { verifyStub, type StubMode } from '../../helpers/verify-stub.js';

const RUN = 'run-1';
const LEDGER = 'verify-test.ndjson';
const FRESH = new Date('2000-01-01T00:00:00Z');
const address = (n: number) => `person${n}@example.com`;

/** The write-ahead lines on disk for an address, read as JSON by this test, not by the ledger. */
function sentLines(dir: string, email: string): number {
  let text: string;
  try {
    text = readFileSync(join(dir, 'verify-test.sent.ndjson'), 'utf8');
  } catch {
    return 0;
  }
  return text
    .split('\n')
    .filter(Boolean)
    .filter((line) => (JSON.parse(line) as { key: string }).key === email).length;
}

/** One part of a pipeline run on the state's ledger in `dir`, resumed from what that ledger holds. */
function partOfRun(dir: string, stub: ReturnType<typeof verifyStub>, budget: number) {
  const resume = LocalVerificationLedger.open(dir, LEDGER, FRESH, RUN);
  const run = newVerificationRun(budget, 3);
  resumeSpend(run, resume, RUN, undefined);
  const verifier = new Verifier(stub, { ledger: LocalVerificationLedger.disabled(), resume }, run, {
    concurrency: 3,
    keyScope: RUN,
    runId: RUN,
  });
  return { run, verifier, resume };
}

describe('a resume counts what its killed part may have spent', () => {
  for (const mode of ['ignore', 'lie', 'honour'] satisfies StubMode[]) {
    it(`calls sent before the kill, answered or not, stay within the budget over both parts (${mode})`, async () => {
      const dir = await scratchDir();
      let killed = true;
      const sentBeforeSend: boolean[] = [];
      // The first part's calls for 2 and 3 never come back; 4's first answer is lost, its retry hangs.
      const stub = verifyStub(
        mode,
        (email, attempt) => {
          if (!killed) return undefined;
          if (email === address(4) && attempt === 1) return 'lost';
          return email === address(1) ? undefined : 'hang';
        },
        (email) => sentBeforeSend.push(sentLines(dir, email) >= stub.sent.filter((sent) => sent === email).length),
      );
      const first = partOfRun(dir, stub, 6);
      void first.verifier.verify(address(1), address(1));
      for (const n of [2, 3, 4]) void first.verifier.verify(address(n), address(n)).catch(() => {});
      while (stub.sent.length < 5) await new Promise((resolve) => setImmediate(resolve));
      // Every attempt was in the write-ahead record before it reached the service.
      expect(sentBeforeSend).toEqual([true, true, true, true, true]);
      expect(stub.charged).toBe(mode === 'honour' ? 4 : 5);
      first.resume.close();

      // The kill: nothing of the first part's memory survives but its ledger on disk.
      killed = false;
      const second = partOfRun(dir, stub, 6);
      expect(second.run).toMatchObject({ unitsSpent: 1, mayAlsoHaveCost: 4, answersLost: 4 });
      const outcomes = await Promise.all(
        [2, 3, 4, 5, 6].map((n) => second.verifier.verify(address(n), address(n)).then((o) => o.verification)),
      );
      // One unit left of the 6: the first address asked for gets it.
      expect(outcomes).toEqual(['valid', 'unchecked', 'unchecked', 'unchecked', 'unchecked']);
      const snapshot = verificationSnapshot(second.run);
      expect(stub.charged).toBeLessThanOrEqual(6);
      expect(snapshot.units_spent_at_most).toBeGreaterThanOrEqual(stub.charged);
      expect(snapshot).toMatchObject({ units_spent: 2, units_spent_at_most: 6 });
      second.resume.close();
    });
  }

  it('an answer kept after its lost tries counts the tries, not the answer twice', async () => {
    const dir = await scratchDir();
    const ledger = LocalVerificationLedger.open(dir, LEDGER, FRESH, RUN);
    ledger.recordSending(address(1), RUN);
    ledger.recordSending(address(1), RUN);
    ledger.put(address(1), { email: address(1), status: 'valid', verified_at: '2026-01-02T03:04:05Z', run: RUN });
    ledger.recordSending(address(2), 'another-run');
    ledger.close();
    const run = newVerificationRun(10, 1);
    resumeSpend(run, LocalVerificationLedger.open(dir, LEDGER, FRESH, RUN), RUN, undefined);
    expect(run).toMatchObject({ unitsSpent: 1, mayAlsoHaveCost: 1, answersLost: 1 });
  });

  it("never says less than the checkpoint's count, from a state written before the write-ahead record", async () => {
    const dir = await scratchDir();
    const run = newVerificationRun(10, 1);
    const counted = { from_cache: 2, unchecked: 1, answers_lost: 3, may_also_have_cost: 3, idempotency_claimed: true };
    resumeSpend(run, LocalVerificationLedger.open(dir, LEDGER, FRESH, RUN), RUN, counted);
    expect(run).toMatchObject({ unitsSpent: 0, mayAlsoHaveCost: 3, answersLost: 3, fromCache: 2, unchecked: 1 });
  });
});

/**
 * The spend plan's arithmetic in process: a resumed run has spent part of its budget already, the
 * answers it kept and what its lost answers may have cost, and the plan pays only what is left, to
 * the oldest addresses. The stub service (test/helpers/verify-stub.ts) says what was charged.
 */
import { describe, expect, it } from 'vitest';
import type { SpendConsent } from '../../../src/core/verification/consent.js';
import { LocalVerificationLedger } from '../../../src/core/verification/ledger.js';
import { planSpend, verifiedInOrder } from '../../../src/core/verification/spend-plan.js';
import { newVerificationRun, Verifier } from '../../../src/core/verification/verifier.js';
import type { ContactRow } from '../../../src/core/shared/contact-row.js';
import { verifyStub } from '../../helpers/verify-stub.js';

/** Rows with stale addresses, the oldest last: a plan that forgets the spend pays the first ones instead. */
const ROWS = Array.from(
  { length: 6 },
  (_, index) =>
    ({
      domain: 'example.com',
      business_email: `p${index}@example.com`,
      business_email_last_seen: `202${5 - index}-01-01`,
      email_freshness: 'stale',
    }) as unknown as ContactRow,
);

async function* rows(): AsyncGenerator<ContactRow> {
  yield* ROWS;
}

/** A consent that never asks, and keeps what it would have shown. */
function consentFor(budget: number) {
  const shown: Array<{ budgetLeft?: number | undefined }> = [];
  const consent = { budget, confirm: async (estimate: (typeof shown)[number]) => void shown.push(estimate) };
  return { consent: consent as unknown as SpendConsent, shown };
}

describe('a resumed run plans with what its earlier part spent', () => {
  it('the answers kept and what lost answers may have cost both come off the budget', async () => {
    const stub = verifyStub('ignore', () => undefined);
    const run = newVerificationRun(6, 1);
    // The earlier part: 2 answers kept, 3 more calls whose answers never came back.
    run.unitsSpent = 2;
    run.mayAlsoHaveCost = 3;
    const verifier = new Verifier(stub, { ledger: LocalVerificationLedger.disabled() }, run, {
      concurrency: 1,
      keyScope: 'resumed',
    });
    const { consent, shown } = consentFor(6);
    await planSpend(rows(), verifier, consent, (during) => during());
    expect(shown).toEqual([{ addresses: 6, alreadyPaid: 0, budgetLeft: 1 }]);
    const written = [];
    for await (const row of verifiedInOrder(rows(), verifier, 4)) written.push(row);
    // One unit left, for the address confirmed longest ago (the last row); the others unchecked.
    expect(stub.sent).toEqual(['p5@example.com']);
    expect(written.map((row) => row.verification)).toEqual([...Array(5).fill('unchecked'), 'valid']);
    expect(run.unitsSpent + run.mayAlsoHaveCost).toBe(6);
  });
});

/**
 * The verifier's budget in process, against a stub service that keeps the truth about money
 * (test/helpers/verify-stub.ts): lost answers in every order (before a later address reserves, a
 * retry after one, an address asked for while that retry is out, several calls at once), against a
 * service that honours Idempotency-Key, one that ignores it and one that says it honours it and does not. In every case the stub's charge is
 * never above the budget and the verifier's "at most" never below the stub's charge.
 */
import { describe, expect, it } from 'vitest';
import { LocalVerificationLedger } from '../../../src/core/verification/ledger.js';
import { newVerificationRun, Verifier } from '../../../src/core/verification/verifier.js';
import { spentLine, verificationSnapshot } from '../../../src/core/verification/report.js';
import { verifyStub, type Fate, type StubMode } from '../../helpers/verify-stub.js';
import { MalformedResponseError, type PaidCallWatch, type VerifyAnswer } from '../../../src/api/index.js';

const MODES: StubMode[] = ['honour', 'ignore', 'lie'];
const address = (n: number) => `person${n}@example.com`;

interface Case {
  budget: number;
  concurrency?: number;
  addresses: number;
  fates: (email: string, attempt: number) => Fate | undefined;
  /** Each address asked for once the one before it is done: a lost answer comes before the next reserves. */
  oneByOne?: boolean;
}

/** Verifies the addresses, all asked for at once (or one by one), on a ledger that keeps nothing (the run's own memory). */
async function verifyAll(mode: StubMode, options: Case) {
  const stub = verifyStub(mode, options.fates);
  const run = newVerificationRun(options.budget, options.concurrency ?? 1);
  const verifier = new Verifier(stub, { ledger: LocalVerificationLedger.disabled() }, run, {
    concurrency: options.concurrency ?? 1,
    keyScope: 'test',
  });
  const emails = Array.from({ length: options.addresses }, (_, index) => address(index + 1));
  const one = (email: string) =>
    verifier.verify(email, email).catch((error: Error) => ({ verification: error.message }));
  const outcomes = [];
  if (options.oneByOne) for (const email of emails) outcomes.push(await one(email));
  else outcomes.push(...(await Promise.all(emails.map(one))));
  return { stub, snapshot: verificationSnapshot(run), outcomes: outcomes.map((outcome) => outcome.verification) };
}

describe('the budget is a ceiling on what the service may have charged', () => {
  for (const mode of MODES) {
    it(`a lost answer keeps its unit, so a later address finds no room (${mode})`, async () => {
      // Budget 1: the first address's answer is lost and its retry refused; the second must not be paid.
      const { stub, snapshot, outcomes } = await verifyAll(mode, {
        budget: 1,
        addresses: 2,
        oneByOne: true,
        fates: (email) => (email === address(1) ? 'lost' : undefined),
      });
      expect(stub.charged).toBe(1);
      expect(stub.chargedFor(address(2))).toBe(0);
      expect(outcomes).toEqual(['unchecked', 'unchecked']);
      expect(snapshot).toMatchObject({ units_spent: 0, units_spent_at_most: 1, answers_lost: 1, unchecked: 2 });
    });

    it(`a retry after a lost answer holds a unit of its own (${mode})`, async () => {
      // Budget 2: the first address is lost once, then answered: two units may be gone, none left for the second.
      const { stub, snapshot, outcomes } = await verifyAll(mode, {
        budget: 2,
        addresses: 2,
        oneByOne: true,
        fates: (email, attempt) => (email === address(1) && attempt === 1 ? 'lost' : undefined),
      });
      expect(stub.sent).toEqual([address(1), address(1)]);
      expect(stub.charged).toBe(mode === 'honour' ? 1 : 2);
      expect(outcomes).toEqual(['valid', 'unchecked']);
      // Never below the charge, whatever the service says of the key: a replay header is not believed.
      expect(snapshot).toMatchObject({ units_spent: 1, units_spent_at_most: 2, answers_lost: 1 });
      expect(snapshot.idempotency).toBe(mode === 'ignore' ? 'not claimed' : 'claimed, not relied on');
    });

    it(`an address asked for while a retry is in flight finds the retry's unit held (${mode})`, async () => {
      // Budget 2: the first address's answer is lost and its retry holds the second unit; the second
      // address, asked for as that retry reaches the service, must find no room.
      let second: Promise<{ verification: string }> | undefined;
      const fates = (email: string, attempt: number): Fate | undefined =>
        email === address(1) && attempt === 1 ? 'lost' : undefined;
      const stub = verifyStub(mode, fates, (email) => {
        if (email === address(1) && stub.sent.length === 2) second = verifier.verify(address(2), address(2));
      });
      const run = newVerificationRun(2, 2);
      const verifier = new Verifier(stub, { ledger: LocalVerificationLedger.disabled() }, run, {
        concurrency: 2,
        keyScope: 'test',
      });
      const first = await verifier.verify(address(1), address(1));
      expect(second).toBeDefined();
      expect([first.verification, (await second!).verification]).toEqual(['valid', 'unchecked']);
      expect(stub.chargedFor(address(2))).toBe(0);
      expect(verificationSnapshot(run).units_spent_at_most).toBeLessThanOrEqual(2);
    });

    it(`many calls at once, every other answer lost: the charge stays within the budget (${mode})`, async () => {
      for (const budget of [1, 2, 3, 5, 8]) {
        const { stub, snapshot } = await verifyAll(mode, {
          budget,
          concurrency: 4,
          addresses: 10,
          fates: (email, attempt) => ((Number(email.match(/\d+/)![0]) + attempt) % 2 === 0 ? 'lost' : undefined),
        });
        expect(stub.charged, `budget ${budget}`).toBeLessThanOrEqual(budget);
        expect(snapshot.units_spent_at_most, `budget ${budget}`).toBeGreaterThanOrEqual(stub.charged);
        expect(snapshot.units_spent_at_most, `budget ${budget}`).toBeLessThanOrEqual(budget);
        expect(snapshot.units_spent, `budget ${budget}`).toBeLessThanOrEqual(stub.charged);
      }
    });
  }

  it('a lost answer with room to spare is retried and answered; the record brackets the charge', async () => {
    const { stub, snapshot, outcomes } = await verifyAll('lie', {
      budget: 10,
      addresses: 3,
      oneByOne: true,
      fates: (email, attempt) => (email === address(2) && attempt <= 2 ? 'lost' : undefined),
    });
    expect(outcomes).toEqual(['valid', 'valid', 'valid']);
    expect(stub.charged).toBe(5);
    expect(snapshot).toMatchObject({ units_spent: 3, units_spent_at_most: 5, answers_lost: 2 });
  });
});

describe('what a kill can cost', () => {
  it('at most --concurrency calls are sent and not yet kept', async () => {
    // A ledger whose put waits: while one answer is being kept, no further call may be sent beyond the slots.
    const stub = verifyStub('ignore', () => undefined);
    const kept: string[] = [];
    let unkeptAtMost = 0;
    const ledger = LocalVerificationLedger.disabled();
    const put = ledger.put.bind(ledger);
    const slow = Object.assign(ledger, {
      put: async (key: string, result: Parameters<typeof put>[1]) => {
        unkeptAtMost = Math.max(unkeptAtMost, stub.sent.length - kept.length);
        await new Promise((resolve) => setTimeout(resolve, 2));
        put(key, result);
        kept.push(key);
      },
    });
    const run = newVerificationRun(undefined, 2);
    const verifier = new Verifier(stub, { ledger: slow }, run, { concurrency: 2, keyScope: 'test' });
    await Promise.all(Array.from({ length: 12 }, (_, index) => verifier.verify(address(index), address(index))));
    expect(kept).toHaveLength(12);
    expect(unkeptAtMost).toBeLessThanOrEqual(2);
    expect(verificationSnapshot(run).kill_may_charge_again).toBe(2);
  });
});

describe('no paid call after a store fails (issue 43)', () => {
  /** A ledger that fails its `failing` operation from its `from`-th call on, as a full disk or a lost session does. */
  function failingLedger(failing: 'put' | 'claim', from: number) {
    const ledger = LocalVerificationLedger.disabled();
    const original = ledger[failing].bind(ledger) as (...args: unknown[]) => unknown;
    let calls = 0;
    return Object.assign(ledger, {
      [failing]: async (...args: unknown[]) => {
        calls += 1;
        if (calls >= from) throw new Error('could not extend file: No space left on device');
        return original(...args);
      },
    });
  }

  for (const [failing, sentBefore] of [
    ['put', 2],
    ['claim', 2],
  ] as const) {
    for (const concurrency of [1, 4]) {
      it(`the ledger's ${failing} fails at the third address (--concurrency ${concurrency}): no call is sent after it`, async () => {
        const stub = verifyStub('ignore', () => undefined);
        const run = newVerificationRun(undefined, concurrency);
        const ledger = failingLedger(failing, 3);
        const verifier = new Verifier(stub, { ledger }, run, { concurrency, keyScope: 'test' });
        const outcomes: string[] = [];
        // One by one: the failure comes before the next address is asked for.
        for (let index = 1; index <= 6; index += 1) {
          const outcome = await verifier
            .verify(address(index), address(index))
            .catch((error: Error) => ({ verification: error.message }));
          outcomes.push(outcome.verification);
        }
        // A put fails after its call was answered: that one was sent, the ones after it never are.
        expect(stub.sent).toEqual(Array.from({ length: failing === 'put' ? 3 : sentBefore }, (_, i) => address(i + 1)));
        expect(outcomes.slice(3)).toEqual(Array(3).fill('could not extend file: No space left on device'));
      });
    }
  }

  it('calls in flight when a store fails finish, and no retry or new call goes out', async () => {
    // Every answer of the first address is lost once; the ledger fails on its first put.
    const stub = verifyStub('ignore', (email, attempt) => (email === address(1) && attempt === 1 ? 'lost' : undefined));
    const run = newVerificationRun(10, 4);
    const verifier = new Verifier(stub, { ledger: failingLedger('put', 1) }, run, { concurrency: 4, keyScope: 'test' });
    await Promise.allSettled(
      Array.from({ length: 8 }, (_, index) => verifier.verify(address(index + 1), address(index + 1))),
    );
    const afterFailure = stub.sent.length;
    await Promise.allSettled([verifier.verify(address(20), address(20))]);
    expect(stub.sent.length).toBe(afterFailure);
    // At most the four slots' calls were under way when the first put failed, plus none after.
    expect(afterFailure).toBeLessThanOrEqual(5);
  });
});

describe('a store that notices its own failure (a team session the server ended)', () => {
  it('no call goes out after it, not even one that waited for its slot; the calls in flight finish', async () => {
    let ended: Error | undefined;
    const stub = verifyStub(
      'ignore',
      () => undefined,
      () => {
        // The server ends the session as the third call goes out.
        if (stub.sent.length === 3) ended = new Error('lost the session with the state database');
      },
    );
    const ledger = Object.assign(LocalVerificationLedger.disabled(), { failed: () => ended });
    const verifier = new Verifier(stub, { ledger }, newVerificationRun(undefined, 2), {
      concurrency: 2,
      keyScope: 'test',
    });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, index) => verifier.verify(address(index + 1), address(index + 1))),
    );
    expect(stub.sent).toEqual([address(1), address(2), address(3)]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(3);
    expect(
      outcomes.filter((outcome) => outcome.status === 'rejected').map((outcome) => String(outcome.reason)),
    ).toEqual(Array(5).fill('Error: lost the session with the state database'));
  });
});

describe('a retry after a lost answer is recorded before it is sent', () => {
  it('waits for a write-ahead record that is a commit (the team store), and sends none when it fails', async () => {
    const events: string[] = [];
    const stub = verifyStub(
      'ignore',
      (email, attempt) => (attempt === 1 ? 'lost' : undefined),
      () => events.push('sent'),
    );
    let records = 0;
    const ledger = Object.assign(LocalVerificationLedger.disabled(), {
      recordSending: async () => {
        records += 1;
        events.push(`recording ${records}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        // The retry's record fails: a full disk, a lost session.
        if (records === 2) throw new Error('no space left on device');
        events.push(`recorded ${records}`);
      },
    });
    const run = newVerificationRun(5, 1);
    const verifier = new Verifier(stub, { ledger }, run, { concurrency: 1, keyScope: 'test', runId: 'run-1' });
    await expect(verifier.verify(address(1), address(1))).rejects.toThrow();
    // The first call was recorded before it went out; its retry's record failed, so no retry was sent.
    expect(events).toEqual(['recording 1', 'recorded 1', 'sent', 'recording 2']);
    expect(stub.sent).toEqual([address(1)]);
    // And no later address is paid for after the store failed.
    await expect(verifier.verify(address(2), address(2))).rejects.toThrow('no space left on device');
    expect(stub.sent).toEqual([address(1)]);
  });
});

describe('paid calls wait for a first answer the client can read', () => {
  /** A service that charges each call and answers, after a turn, what `answer(n)` gives the n-th call. */
  function countingService(answer: (call: number) => VerifyAnswer | Error) {
    let calls = 0;
    let inFlight = 0;
    let inFlightAtMost = 0;
    return {
      get calls() {
        return calls;
      },
      get inFlightAtMost() {
        return inFlightAtMost;
      },
      async verify(_email: string, options: { paid?: PaidCallWatch }): Promise<VerifyAnswer> {
        calls += 1;
        const call = calls;
        inFlight += 1;
        inFlightAtMost = Math.max(inFlightAtMost, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 1));
        inFlight -= 1;
        const result = answer(call);
        // As the request loop does: a 2xx it cannot read may have been charged.
        if (result instanceof MalformedResponseError) options.paid?.answerLost();
        if (result instanceof Error) throw result;
        return result;
      },
    };
  }
  const valid = (): VerifyAnswer =>
    ({ status: 'valid', status_raw: 'valid', checked_at: '2026-12-01T00:00:00Z' }) as unknown as VerifyAnswer;

  async function verifyTen(service: ReturnType<typeof countingService>) {
    const run = newVerificationRun(20, 4);
    const verifier = new Verifier(service, { ledger: LocalVerificationLedger.disabled() }, run, {
      concurrency: 4,
      keyScope: 'test',
    });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, index) => verifier.verify(address(index), address(index))),
    );
    const verdicts = outcomes.map((outcome) =>
      outcome.status === 'fulfilled' ? outcome.value.verification : 'failed',
    );
    return Object.assign(verdicts, { run });
  }

  it('an answer it cannot read costs one call, not --concurrency: no paid call starts after it', async () => {
    const service = countingService(() => new MalformedResponseError('unexpected shape'));
    const outcomes = await verifyTen(service);
    expect(service.calls).toBe(1);
    expect([...outcomes]).toEqual(Array.from({ length: 10 }, () => 'failed'));
    // Nothing read, so nothing kept: the last line must not say a re-run finds it.
    expect(spentLine(verificationSnapshot(outcomes.run), 'ledger')).toBe(
      'spent 0 units (at most 1) before the run stopped; no answer came back to keep: a re-run asks again.',
    );
  });

  it('once one answer is read, the calls go out --concurrency at a time', async () => {
    const service = countingService(valid);
    const outcomes = await verifyTen(service);
    expect(service.calls).toBe(10);
    expect(service.inFlightAtMost).toBe(4);
    expect([...outcomes]).toEqual(Array.from({ length: 10 }, () => 'valid'));
  });

  it('a first call that fails for the network lets the next go alone, and reading one opens the rest', async () => {
    const service = countingService((call) => (call === 1 ? new Error('socket hang up') : valid()));
    const outcomes = await verifyTen(service);
    expect(service.calls).toBe(10);
    expect(outcomes.filter((outcome) => outcome === 'valid')).toHaveLength(9);
    expect(service.inFlightAtMost).toBe(4);
  });
});

describe('a stop met by a store call is no store failure', () => {
  it('a call written ahead when another address meets the stop in its claim still goes out, and is kept', async () => {
    const stub = verifyStub('honour', () => undefined);
    const run = newVerificationRun(10, 2);
    const stop = new AbortController();
    let release!: () => void;
    const stopped = new Promise<void>((resolve) => (release = resolve));
    const ledger = LocalVerificationLedger.disabled();
    const claim = ledger.claim.bind(ledger);
    Object.assign(ledger, {
      // The second address's claim meets the stop as the file ledger's does: it throws the signal's reason.
      claim: async (key: string, token: string, signal?: AbortSignal) => {
        if (key === 'k2') {
          await stopped;
          signal?.throwIfAborted();
        }
        return claim(key, token, signal);
      },
      // SIGTERM lands once the first call is written ahead, before it is sent.
      recordSending: async () => {
        stop.abort('SIGTERM');
        release();
      },
    });
    const verifier = new Verifier(stub, { ledger }, run, { concurrency: 2, keyScope: 'test', signal: stop.signal });
    const [first, second] = await Promise.allSettled([
      verifier.verify('k1', address(1)),
      verifier.verify('k2', address(2)),
    ]);
    expect(second).toEqual({ status: 'rejected', reason: 'SIGTERM' });
    // Written ahead, so sent and answered: a resume must not count it as possibly charged and unanswered.
    expect(stub.sent).toEqual([address(1)]);
    expect(first.status).toBe('fulfilled');
    expect(verificationSnapshot(run).units_spent).toBe(1);
  });
});

/**
 * A paid /verify service and the client's request loop around it, in a few lines, for the verifier's
 * fast tests: the truth about money (what the service charged) is kept here, never read from the
 * code under test. Each attempt charges a unit unless the service honours the key and has answered
 * it before; a scripted attempt then loses its answer (charged, but never read), and the loop asks
 * the verifier's PaidCallWatch whether it may retry, as src/api/request-loop.ts does.
 */
import type { PaidCallWatch, VerifyAnswer } from '../../src/api/index.js';

/** honour: replays a known key for free; ignore: charges every call, says nothing; lie: charges every call, says "first". */
export type StubMode = 'honour' | 'ignore' | 'lie';

/** What happens to an attempt: its answer arrives, is lost after the charge, or never comes back (a kill). */
export type Fate = 'answer' | 'lost' | 'hang';

export interface VerifyStub {
  verify(email: string, options: { idempotencyKey?: string; paid?: PaidCallWatch }): Promise<VerifyAnswer>;
  /** Units charged in all, and per address. */
  readonly charged: number;
  chargedFor(email: string): number;
  /** Attempts sent, in order, by address. */
  readonly sent: string[];
}

/**
 * `fates(email, attempt)`: the fate of the address's n-th attempt (1-based, counted over the stub's
 * life, so a resumed run's attempts go on counting); 'answer' when it returns undefined.
 */
export function verifyStub(
  mode: StubMode,
  fates: (email: string, attempt: number) => Fate | undefined,
  /** Called as each attempt reaches the service: what a test checks was on disk before it. */
  onSend?: (email: string) => void,
): VerifyStub {
  const perAddress = new Map<string, number>();
  const attempts = new Map<string, number>();
  const honoured = new Set<string>();
  const sent: string[] = [];
  let charged = 0;
  return {
    get charged() {
      return charged;
    },
    chargedFor: (email) => perAddress.get(email) ?? 0,
    sent,
    async verify(email, { idempotencyKey, paid }) {
      for (;;) {
        const attempt = (attempts.get(email) ?? 0) + 1;
        attempts.set(email, attempt);
        // The verifier's last word before an attempt goes out, as the request loop asks it.
        await paid?.beforeSend?.();
        sent.push(email);
        onSend?.(email);
        const replay = mode === 'honour' && idempotencyKey !== undefined && honoured.has(`${idempotencyKey} ${email}`);
        if (!replay) {
          charged += 1;
          perAddress.set(email, (perAddress.get(email) ?? 0) + 1);
          if (idempotencyKey !== undefined) honoured.add(`${idempotencyKey} ${email}`);
        }
        // Let other calls run between attempts, as the network does.
        await new Promise((resolve) => setImmediate(resolve));
        const fate = fates(email, attempt) ?? 'answer';
        if (fate === 'hang') return new Promise<never>(() => {});
        if (fate === 'answer') {
          const idempotency =
            mode === 'ignore' || idempotencyKey === undefined ? undefined : replay ? 'replayed' : 'first';
          return {
            email,
            status: 'valid',
            checked_at: '2026-01-02T03:04:05Z',
            ...(idempotency && { idempotency }),
          } as VerifyAnswer;
        }
        paid?.answerLost();
        if (paid !== undefined && !(await paid.mayRetry())) throw new Error(`the answer for ${email} was lost`);
      }
    },
  };
}

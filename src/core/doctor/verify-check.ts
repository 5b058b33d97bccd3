/**
 * `doctor --verify ADDRESS` (issue 42): the only way doctor calls /verify. One named address, paid as
 * any verification is: with consent and a cap (consent.ts), an Idempotency-Key, its result kept in
 * the verification ledger, never paid twice. Its answer, or its refusal, says whether the verify
 * path, method, parameter and status vocabulary are the ones the client uses.
 */
import {
  CONTRACT_DEFAULTS,
  type ContractSetting,
  type ContractSettings,
  type RequestError,
  type VerifyAnswer,
} from '../../api/index.js';
import { UsageError } from '../../exit-codes.js';
import { checkEmailSyntax, emailKey } from '../../io/emails.js';
import { CACHE_TTL } from '../../options/flags.js';
import type { Connection } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import type { JobDeps } from '../../runtime/job-deps.js';
import { countOf } from '../../ui/format-count.js';
import { displaySafe } from '../../util/display-safe.js';
import { SpendConsent } from '../verification/consent.js';
import { cacheCutoff, openVerificationLedger, openVerifier } from '../verification/open-verifier.js';
import { matches, needs, recognised, unknown, type Verdict } from './contract.js';
import type { DoctorOutput } from './diagnose.js';

/** A setting and the value to give it, the name checked against the one list (src/api/contract.ts). */
const set = (name: ContractSetting, value: string) => `${name} ${value}`;

export interface VerifyCheckFlags {
  /** --verify ADDRESS. */
  verify?: string | undefined;
  /** --yes: pay the one unit without asking. */
  yes: boolean;
}

/** The paid check, run after the free ones: its verdicts. */
type VerifyCheck = (out: DoctorOutput) => Promise<Verdict[]>;

/** The address of --verify, checked before any call: a malformed one is exit 2. */
export function verifyAddressOf(flags: VerifyCheckFlags): string | undefined {
  if (flags.verify === undefined) return undefined;
  const checked = checkEmailSyntax(flags.verify);
  if (!checked.ok)
    throw new UsageError(`--verify "${displaySafe(flags.verify).slice(0, 80)}": ${checked.reason}; nothing was spent.`);
  return checked.email;
}

/**
 * Consent before any call (a terminal is asked; off one, --yes or a verify-budget is needed, exit 2
 * otherwise), then the check to run once the free ones are done. An address the ledger already
 * holds is not paid for again: doctor then cannot tell, and says so.
 */
export async function prepareVerifyCheck(
  ctx: RunContext,
  deps: Pick<JobDeps, 'paidClient' | 'now'>,
  connection: Connection,
  email: string,
  flags: VerifyCheckFlags,
): Promise<VerifyCheck> {
  const key = emailKey(email);
  const cacheFreshSince = cacheCutoff(String(CACHE_TTL.default), deps.now());
  // Looked at before any question; the check opens its own (a doctor that fails first leaves none open).
  const ledger = await openVerificationLedger(ctx, connection, { useCache: true, cacheFreshSince });
  const paid = ledger.get(key);
  void ledger.close();
  if (paid) {
    return async () => [
      unknown('verify', `${email} was verified at ${paid.verified_at}: kept in the ledger, not paid again`),
    ];
  }
  const consent = await SpendConsent.decide(ctx, { yes: flags.yes, budget: undefined });
  consent.assertMayPay('doctor --verify');
  const typed = await consent.confirm({ addresses: 1, alreadyPaid: 0 });
  const budget = Math.min(1, typed ?? consent.budget ?? 1);
  return async (out) => {
    let answer: VerifyAnswer | undefined;
    const client = deps.paidClient(connection);
    const recording = {
      verify: async (...args: Parameters<typeof client.verify>) => (answer = await client.verify(...args)),
    };
    const verifier = await openVerifier(ctx, recording, connection, {
      useCache: true,
      cacheFreshSince,
      budget,
      concurrency: 1,
    });
    try {
      await verifier.verify(key, email);
    } finally {
      await verifier.settle();
      verifier.close();
    }
    const { units_spent, units_spent_at_most } = verifier.snapshot();
    const most = units_spent_at_most > units_spent ? ` (at most ${units_spent_at_most})` : '';
    const kept = units_spent_at_most > 0 ? ', kept in the verification ledger' : '';
    out.line(`--  verify    ${countOf(units_spent, 'unit')}${most} charged for ${email}${kept}`);
    if (budget < 1) return [unknown('verify', 'a cap of 0 units: nothing was paid')];
    return verifyVerdicts({ ...CONTRACT_DEFAULTS, ...connection.contract }, answer, verifier.refusal);
  };
}

/** What the answer, or the refusal, says of each of the four verify settings. */
function verifyVerdicts(
  contract: ContractSettings,
  answer: VerifyAnswer | undefined,
  refusal: RequestError | undefined,
): Verdict[] {
  const asked = `${contract.verifyMethod} ${contract.verifyPath} with "${contract.verifyParam}"`;
  if (answer !== undefined)
    return [
      matches('verify path', `${contract.verifyPath} answered`),
      matches('verify method', contract.verifyMethod),
      matches('verify param', `"${contract.verifyParam}"`),
      statusVerdict(answer),
    ];
  const status = refusal?.status;
  const said = `${asked} answered ${status ?? 'nothing'}${refusal ? `: ${refusal.reason}` : ''}`;
  const rest = (points: string[]) => points.map((point) => unknown(point, 'not reached'));
  if (status === 404)
    return [
      needs('verify path', set('verify-path', 'PATH'), said),
      ...rest(['verify method', 'verify param', 'verify statuses']),
    ];
  if (status === 405) {
    const other = contract.verifyMethod === 'GET' ? 'POST' : 'GET';
    return [
      matches('verify path', `${contract.verifyPath} exists (405)`),
      needs('verify method', set('verify-method', other), said),
      ...rest(['verify param', 'verify statuses']),
    ];
  }
  if (status === 400 || status === 422)
    return [
      matches('verify path', `${contract.verifyPath} exists (${status})`),
      matches('verify method', contract.verifyMethod),
      needs('verify param', set('verify-param', 'NAME'), said),
      ...rest(['verify statuses']),
    ];
  return [unknown('verify', status === 402 ? `no verification credits (402): ${said}` : said)];
}

function statusVerdict(answer: VerifyAnswer): Verdict {
  const word = `"${displaySafe(answer.status_raw).slice(0, 40)}"`;
  if (!answer.status_known)
    return needs(
      'verify statuses',
      set('verify-statuses', `${displaySafe(answer.status_raw).slice(0, 40).replace(/\s+/g, '_')}=OURS`),
      `status ${word} is in no vocabulary prospect knows; OURS is valid, invalid, risky or unknown`,
    );
  return answer.status_raw === answer.status
    ? matches('verify statuses', `status ${word}`)
    : recognised('verify statuses', `status ${word}, read as ${answer.status}`);
}

/**
 * GET /api/v1/verify?email= (contract rows 22-23). The status is deterministic: a hash of the address
 * decides, with odds that depend on what the dataset knows. An address of a generated contact is
 * likelier to be invalid the longer ago it was last confirmed; an address at a known company that is
 * no contact's is mostly invalid or a catch-all (risky); an address at an unknown domain is mostly
 * unknown. Only a 200 costs a unit, and a replay of an idempotent call (contract row 27) costs nothing;
 * an answer to a call whose key was honoured says so (`Idempotent-Replayed`), unless the sandbox was
 * started to ignore the key (`--ignore-idempotency`), as a service without idempotency would, or to
 * ignore it while saying `Idempotent-Replayed: false` on every answer (`--lie-about-idempotency`).
 */
import { hash32 } from './dataset/random.js';
import type { Dataset } from './dataset/dataset.js';
import type { ContactStore } from './contact-store.js';
import { isEmailAddress } from './domains.js';
import {
  IDEMPOTENCY_HEADER,
  idempotencyKeyOf,
  IdempotencyStore,
  REPLAYED_HEADER,
  type IdempotencyMode,
} from './idempotency.js';
import { invalidParameter, missingParameter } from './errors.js';
import { singleValues, truncate } from './query.js';
import type { StatsCounter } from './stats.js';
import type { ApiRequest, Reply, Route } from './types.js';

type VerifyStatus = 'valid' | 'invalid' | 'risky' | 'unknown';

/** Odds as [valid, invalid, risky, unknown]. */
type Odds = readonly [number, number, number, number];
const STATUSES: readonly VerifyStatus[] = ['valid', 'invalid', 'risky', 'unknown'];
const ODDS = {
  confirmedRecently: [0.9, 0.04, 0.05, 0.01], // last seen within 6 months
  confirmedThisYear: [0.75, 0.13, 0.1, 0.02], // 6 to 18 months
  confirmedLongAgo: [0.45, 0.4, 0.12, 0.03], // over 18 months
  knownDomainOtherAddress: [0.05, 0.6, 0.3, 0.05],
  unknownDomain: [0.05, 0.1, 0.3, 0.55],
} as const satisfies Record<string, Odds>;

export function verifyRoute(
  dataset: Dataset,
  store: ContactStore,
  stats: StatsCounter,
  asOf: string,
  mode: IdempotencyMode = 'honour',
): Route {
  const asOfDay = Date.parse(`${asOf}T00:00:00Z`);
  const checkTimes = checkTimesOf(asOf, Date.now());
  const answered = new IdempotencyStore();
  return (request: ApiRequest): Reply => {
    const params = singleValues(request.query, ['email'] as const);
    if (params.email === undefined || params.email.trim() === '') throw missingParameter('email');
    const email = params.email.trim();
    if (!isEmailAddress(email)) throw invalidParameter('email', `'${truncate(email)}' is not an e-mail address.`);

    const sentKey = mode === 'ignore' ? undefined : idempotencyKeyOf(request.headers[IDEMPOTENCY_HEADER]);
    const idempotencyKey = mode === 'honour' ? sentKey : undefined;

    const address = email.toLowerCase();
    const replay = idempotencyKey === undefined ? undefined : answered.replay(request.plan, idempotencyKey, address);
    // Idempotent-Replayed (contract row 27): the client learns that the key was honoured, and whether this is a replay.
    if (replay) return { ...replay, headers: { ...replay.headers, [REPLAYED_HEADER]: 'true' } };
    const status = statusOf(address, oddsFor(address, dataset, store, asOfDay), dataset.seed);
    const unitsUsed = stats.chargeUnit(request.plan, address);
    const reply: Reply = {
      status: 200,
      headers: {
        'x-units-used': String(unitsUsed),
        // A key honoured, or (the liar) a key ignored: "a first answer", the retry of a charged call's too.
        ...(sentKey !== undefined && { [REPLAYED_HEADER]: 'false' }),
      },
      body: {
        data: { email, status, checked_at: checkTimes(address, dataset.seed, Date.now()) },
        meta: { units_charged: 1, units_used: unitsUsed },
      },
    };
    if (idempotencyKey !== undefined) answered.remember(request.plan, idempotencyKey, address, reply);
    return reply;
  };
}

function oddsFor(address: string, dataset: Dataset, store: ContactStore, asOfDay: number): Odds {
  const domain = address.slice(address.lastIndexOf('@') + 1);
  if (dataset.companyIndex(domain) === undefined) return ODDS.unknownDomain;
  const contact = store.forDomain(domain).byEmail.get(address);
  if (!contact?.business_email_last_seen) return ODDS.knownDomainOtherAddress;
  const ageDays = (asOfDay - Date.parse(`${contact.business_email_last_seen}T00:00:00Z`)) / 86_400_000;
  if (ageDays <= 183) return ODDS.confirmedRecently;
  if (ageDays <= 548) return ODDS.confirmedThisYear;
  return ODDS.confirmedLongAgo;
}

function statusOf(address: string, odds: Odds, seed: number): VerifyStatus {
  let u = hash32(seed, 'verify', address) / 0x100000000;
  for (let k = 0; k < odds.length; k++) {
    u -= odds[k] as number;
    if (u < 0) return STATUSES[k] as VerifyStatus;
  }
  return 'unknown';
}

/**
 * Check times: a time on the snapshot day, fixed per address, and never later than the answer. On a
 * past snapshot day any time of the day will do, so a given seed and day give the same bytes. On a
 * snapshot of today only the part of the day gone by when the sandbox started will do: the times stay
 * fixed for the sandbox's life (a resumed run gets the bytes of an uninterrupted one) and are in the past.
 */
function checkTimesOf(asOf: string, startedAt: number): (address: string, seed: number, answeredAt: number) => string {
  const dayStart = Date.parse(`${asOf}T00:00:00Z`);
  const secondsGone = Math.min(86_400, Math.max(1, Math.floor((startedAt - dayStart) / 1000)));
  return (address, seed, answeredAt) => {
    const at = dayStart + (hash32(seed, 'checked-at', address) % secondsGone) * 1000;
    // Only a snapshot day after today (a deliberate --as-of) could still put it after the answer.
    return new Date(Math.min(at, Math.floor(answeredAt / 1000) * 1000)).toISOString().replace('.000Z', 'Z');
  };
}

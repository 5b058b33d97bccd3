/**
 * The fault plan: what goes wrong, on purpose, when a test asks for it (`--latency`, `--fail-rate`, `--faults`,
 * `--latency-spike`). Off by default. Each request's fate depends on the fault seed and its arrival index only,
 * so a run can be replayed and every kind is met (docs/api-contract.md, "--fault-seed").
 * To add a fault kind, add its name to FAULT_KIND_NAMES (fault-kinds.ts) and its outcome here.
 */
import { hash32, Random } from './dataset/random.js';
import { ApiError } from './errors.js';
import { DEFAULT_FAULT_KINDS, type FaultKindName } from './fault-kinds.js';

export { LATENCY_SPIKE, type FaultKindName } from './fault-kinds.js';

/** What the server does instead of (or to) the real answer. */
export type FaultOutcome =
  /** Answer with this error instead of the real answer. */
  | { kind: 'reply'; error: ApiError }
  /** Answer with a non-JSON page, as a proxy in front of the service would. */
  | { kind: 'html'; status: number; body: string }
  /** Close the connection before any answer. */
  | { kind: 'drop' }
  /** Never answer; the connection stays open until the client gives up or the sandbox stops. */
  | { kind: 'no-response' }
  /** Send the real answer's headers and half its body, then destroy the connection or fall silent. */
  | { kind: 'cut-body'; then: 'destroy' | 'stall' };

/** Retry-After of the injected 503 and 429: one second, so a client that honours it waits briefly. */
const RETRY_AFTER_SECONDS = 1;

const BAD_GATEWAY_PAGE =
  '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><p>injected by prospect ' +
  'sandbox</p></body></html>';

const FAULT_KINDS: Readonly<Record<FaultKindName, () => FaultOutcome>> = {
  '500': () => ({
    kind: 'reply',
    error: new ApiError(500, 'internal_error', 'Injected fault: internal error (sandbox --fail-rate).'),
  }),
  '502': () => ({ kind: 'html', status: 502, body: BAD_GATEWAY_PAGE }),
  '503': () => ({ kind: 'reply', error: unavailable({ 'retry-after': String(RETRY_AFTER_SECONDS) }) }),
  '503-no-retry-after': () => ({ kind: 'reply', error: unavailable({}) }),
  '429': () => ({ kind: 'reply', error: rateLimited(true) }),
  '429-no-retry-after': () => ({ kind: 'reply', error: rateLimited(false) }),
  drop: () => ({ kind: 'drop' }),
  'reset-mid-body': () => ({ kind: 'cut-body', then: 'destroy' }),
  'stall-mid-body': () => ({ kind: 'cut-body', then: 'stall' }),
  'no-response': () => ({ kind: 'no-response' }),
};

function unavailable(headers: Record<string, string>): ApiError {
  return new ApiError(
    503,
    'service_unavailable',
    'Injected fault: service unavailable (sandbox --fail-rate).',
    {},
    headers,
  );
}

/** With the hint: the header and `retry_after` in the body, as the real rate limit sends them (contract row 12). */
function rateLimited(withHint: boolean): ApiError {
  const reason = 'Injected fault: too many requests (sandbox --fail-rate).';
  return withHint
    ? new ApiError(
        429,
        'rate_limited',
        reason,
        { retry_after: RETRY_AFTER_SECONDS },
        { 'retry-after': String(RETRY_AFTER_SECONDS) },
      )
    : new ApiError(429, 'rate_limited', reason);
}

export interface FaultOptions {
  /** Seeds the draws; the sandbox defaults it to the dataset seed. */
  seed: number;
  /** Share of API requests that fail, 0..1. */
  failRate: number;
  /** The kinds failing requests are dealt, in equal shares. */
  kinds: readonly FaultKindName[];
  /** The first N API requests get no failure and no spike: a service that goes down mid-run. */
  after: number;
  /** Added before every API response, in milliseconds. */
  latencyMs: number;
  /** Added on top of latencyMs to a share (spikeRate) of the API requests. */
  spikeMs: number;
  spikeRate: number;
}

/** What happens to one API request. */
export interface RequestFate {
  /** Wait before answering: the latency, plus the spike when there is one. */
  delayMs: number;
  spiked: boolean;
  fault: { name: FaultKindName; outcome: FaultOutcome } | undefined;
}

/** Keeps the fault draws apart from any other use of the same seed. */
const FAULT_STREAM = 0x6661756c; // "faul"

const NO_FAULTS: FaultOptions = {
  seed: 0,
  failRate: 0,
  kinds: DEFAULT_FAULT_KINDS,
  after: 0,
  latencyMs: 0,
  spikeMs: 0,
  spikeRate: 0,
};

export class FaultPlan {
  private requestsSeen = 0;
  private failuresDealt = 0;
  private deck: { number: number; cards: FaultKindName[] } | undefined;

  constructor(private readonly options: FaultOptions = NO_FAULTS) {
    if (options.kinds.length === 0) throw new RangeError('FaultPlan: at least one fault kind is needed');
  }

  /** The fate of the next API request, in order of arrival. */
  next(): RequestFate {
    const index = this.requestsSeen++;
    const { latencyMs, spikeMs } = this.options;
    const { fails, spiked } = this.drawFor(index);
    const name = fails ? this.dealKind() : undefined;
    return {
      delayMs: latencyMs + (spiked ? spikeMs : 0),
      spiked,
      fault: name === undefined ? undefined : { name, outcome: FAULT_KINDS[name]() },
    };
  }

  /**
   * Whether request `index` (0-based, in arrival order) fails and is spiked: a function of the seed and the index only.
   */
  private drawFor(index: number): { fails: boolean; spiked: boolean } {
    const { seed, failRate, after, spikeMs, spikeRate } = this.options;
    if (index < after) return { fails: false, spiked: false };
    const draws = new Random(hash32(FAULT_STREAM, seed, index));
    // Both draws are always made, in this order, so one setting never shifts the other's draws.
    const failDraw = draws.next();
    const spikeDraw = draws.next();
    return { fails: failDraw < failRate, spiked: spikeMs > 0 && spikeDraw < spikeRate };
  }

  /** The next card of the current deck; a new deck, shuffled by (seed, deck number), once it is used up. */
  private dealKind(): FaultKindName {
    const { kinds, seed } = this.options;
    const deckNumber = Math.floor(this.failuresDealt / kinds.length);
    if (this.deck?.number !== deckNumber) {
      this.deck = {
        number: deckNumber,
        cards: new Random(hash32(FAULT_STREAM, seed, 'deck', deckNumber)).shuffle([...kinds]),
      };
    }
    return this.deck.cards[this.failuresDealt++ % kinds.length] as FaultKindName;
  }
}

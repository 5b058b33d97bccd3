/**
 * The fault plan: what goes wrong, on purpose, when a test asks for it (`--latency`, `--fail-rate`).
 * Off by default. Decisions come from a PRNG seeded from the sandbox seed, so a run with the same
 * seed and the same sequence of requests fails the same requests the same way.
 *
 * To add a fault kind, add an entry to FAULT_KINDS: it gets an equal share of the failing requests.
 */
import { Random } from '../../fixtures/generator/random.js';
import { ApiError } from './errors.js';

/** A failing request is either answered with an error or its connection is dropped with no answer. */
export type FaultOutcome = { kind: 'reply'; error: ApiError } | { kind: 'drop' };

export interface FaultKind {
  readonly name: string;
  outcome(): FaultOutcome;
}

export const FAULT_KINDS: readonly FaultKind[] = [
  {
    name: 'internal-error',
    outcome: () => ({ kind: 'reply', error: new ApiError(500, 'internal_error', 'Injected fault: internal error (sandbox --fail-rate).') }),
  },
  {
    name: 'unavailable',
    outcome: () => ({
      kind: 'reply',
      error: new ApiError(503, 'service_unavailable', 'Injected fault: service unavailable (sandbox --fail-rate).', {}, { 'retry-after': '1' }),
    }),
  },
  { name: 'connection-drop', outcome: () => ({ kind: 'drop' }) },
];

export interface FaultOptions {
  seed: number;
  /** Share of API requests that fail, 0..1. */
  failRate: number;
  /** Added before every API response, in milliseconds. */
  latencyMs: number;
}

export class FaultPlan {
  private readonly random: Random;

  constructor(
    private readonly options: FaultOptions,
    private readonly kinds: readonly FaultKind[] = FAULT_KINDS,
  ) {
    this.random = new Random(options.seed ^ 0x6661756c);
  }

  get latencyMs(): number {
    return this.options.latencyMs;
  }

  /** The fault for the next API request, or undefined to serve it normally. */
  next(): FaultOutcome | undefined {
    if (this.options.failRate <= 0) return undefined;
    if (this.random.next() >= this.options.failRate) return undefined;
    return this.random.pick(this.kinds).outcome();
  }
}

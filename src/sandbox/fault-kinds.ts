/**
 * The names of the sandbox's fault kinds, for checking `--faults` (a start-up module: README "Start-up").
 * What each kind does is in faults.ts.
 */

export const FAULT_KIND_NAMES = [
  /** 500 internal_error (JSON). */
  '500',
  /** 502 with an HTML page, as a proxy in front of the service sends it. */
  '502',
  /** 503 service_unavailable with Retry-After: 1. */
  '503',
  /** 503 service_unavailable with no hint of when to come back. */
  '503-no-retry-after',
  /** 429 rate_limited with Retry-After: 1 (and retry_after in the body). */
  '429',
  /** 429 rate_limited with neither the header nor retry_after in the body. */
  '429-no-retry-after',
  /** The connection is closed before any answer. */
  'drop',
  /** The real answer's headers (full Content-Length) and half its body, then the connection is destroyed. */
  'reset-mid-body',
  /** The real answer's headers (full Content-Length) and half its body, then silence: only a client timeout ends it. */
  'stall-mid-body',
  /** No answer at all, not even headers; the connection stays open. */
  'no-response',
] as const;

export type FaultKindName = (typeof FAULT_KIND_NAMES)[number];

/** The mix `--fail-rate` draws from unless `--faults` says otherwise (the historical one). */
export const DEFAULT_FAULT_KINDS: readonly FaultKindName[] = ['500', '503', 'drop'];

/** The stats key for requests that got a latency spike (counted beside the fault kinds). */
export const LATENCY_SPIKE = 'latency-spike';

function isFaultKindName(name: string): name is FaultKindName {
  return (FAULT_KIND_NAMES as readonly string[]).includes(name);
}

export type FaultKindsParse = { ok: true; kinds: FaultKindName[] } | { ok: false; reason: string };

/** `500,drop` → those kinds; `all` → every kind. Duplicates collapse; unknown or empty names are refused. */
export function parseFaultKinds(text: string): FaultKindsParse {
  const names = text.split(',').map((name) => name.trim().toLowerCase());
  if (names.length === 1 && names[0] === 'all') return { ok: true, kinds: [...FAULT_KIND_NAMES] };
  const unknown = names.filter((name) => !isFaultKindName(name));
  if (unknown.length > 0) {
    const shown = unknown.map((name) => (name === '' ? 'an empty name' : `"${name}"`)).join(', ');
    return { ok: false, reason: `unknown fault kind ${shown}; kinds are all, ${FAULT_KIND_NAMES.join(', ')}` };
  }
  return { ok: true, kinds: [...new Set(names)] as FaultKindName[] };
}

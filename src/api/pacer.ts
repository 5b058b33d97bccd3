/**
 * One pace for every request of a client, whichever worker sends it. A 429 is the service saying
 * "too fast": every request waits out its Retry-After, fewer run at once, and requests start no
 * closer together than the rate the service was seen to allow; both relax again while answers come
 * without 429s. The first request runs alone, and for the first second the number in flight grows
 * by one every PROBE_STEP_MS, so a per-second limit is met by a request or two, not by a burst of
 * every worker; after a second without a 429 it grows by one per answer, up to the pool's size.
 */

export interface PacerOptions {
  /** The most requests in flight at once (the connection pool's size). */
  maxInFlight: number;
  now?: () => number;
}

/** An admitted attempt; given back to `finish` with what came of it. */
export interface PacerTicket {
  readonly startedAt: number;
}

interface Waiter {
  admit: (ticket: PacerTicket) => void;
  fail: (error: unknown) => void;
}

/** A rate the service allowed is kept for a minute: long enough for per-minute limits. */
const REMEMBERED_MS = 60_000;
/** Requests start this much further apart than the rate the service was seen to allow. */
const SAFETY_MARGIN = 1.05;
/** After this many answers without a 429 the spacing shrinks by RELAX_FACTOR, to find a raised limit. */
const RELAX_AFTER_ANSWERS = 100;
const RELAX_FACTOR = 0.95;
/** How long the number in flight grows gently at the start, before it may double each round trip. */
const PROBE_MS = 1000;
const PROBE_STEP_MS = 400;
/** How many windows back (each as long as the pause a 429 asked for, at least 1 s) the allowed rate is looked for. */
const RATE_WINDOWS = 5;
/** Fewer answers than this in the busiest window give no rate to pace by. */
const MIN_ANSWERS_FOR_A_RATE = 3;
/** The pause after a 429 without Retry-After. */
const DEFAULT_PAUSE_MS = 1000;

export class RequestPacer {
  private inFlight = 0;
  private allowedInFlight = 1;
  private slowStart = true;
  private firstStartAt: number | undefined;
  private answersTowardRaise = 0;
  private answersSinceRelax = 0;
  private resumeAt = 0;
  private spacingMs = 0;
  private lastStartAt = Number.NEGATIVE_INFINITY;
  private last429At = Number.NEGATIVE_INFINITY;
  /** Start times of attempts the service answered without a 429, oldest first. */
  private readonly answeredStarts: number[] = [];
  private readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: PacerOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /** Resolves when this attempt may start; rejects (with stoppedError's error) if a signal stops it first. */
  admit(signals: readonly AbortSignal[], stoppedError: () => Error | undefined): Promise<PacerTicket> {
    return new Promise<PacerTicket>((resolve, reject) => {
      const forget = (): void => {
        for (const signal of signals) signal.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        admit: (ticket) => {
          forget();
          resolve(ticket);
        },
        fail: (error) => {
          forget();
          reject(error);
        },
      };
      const onAbort = (): void => {
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
        waiter.fail(stoppedError() ?? new Error('stopped'));
        this.pump();
      };
      if (signals.some((signal) => signal.aborted)) return onAbort();
      for (const signal of signals) signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
      this.pump();
    });
  }

  /** What came of an admitted attempt: an answer other than 429, a 429, or no answer at all. */
  finish(
    ticket: PacerTicket,
    outcome: { rateLimited: true; retryAfterMs: number | undefined } | { rateLimited: false; answered: boolean },
  ): void {
    this.inFlight--;
    if (outcome.rateLimited) this.slowDown(ticket, outcome.retryAfterMs);
    else if (outcome.answered) this.speedUp(ticket);
    this.pump();
  }

  /** How long requests are held back now (for messages); 0 when they are not. */
  pausedForMs(): number {
    return Math.max(0, this.resumeAt - this.now());
  }

  private slowDown(ticket: PacerTicket, retryAfterMs: number | undefined): void {
    const now = this.now();
    const pauseMs = retryAfterMs ?? DEFAULT_PAUSE_MS;
    this.resumeAt = Math.max(this.resumeAt, now + pauseMs);
    // The other 429s of a burst that was already on the wire say nothing new.
    if (ticket.startedAt < this.last429At) return;
    this.last429At = now;
    this.slowStart = false;
    this.answersTowardRaise = 0;
    this.answersSinceRelax = 0;
    this.allowedInFlight = Math.max(1, Math.floor((this.inFlight + 1) / 2));
    // The rate the service allowed: the most answers in one window of the last few. The service lets
    // no more than its limit through in any window, so the busiest shows the limit, where the last
    // alone may show only a slow stretch of the client's (timeouts, a pause): a 429 that is not a
    // rate limit then slows little. Too few answers to tell, and the spacing is left as it is.
    const windowMs = Math.max(pauseMs, DEFAULT_PAUSE_MS);
    let allowed = 0;
    for (let window = 0; window < RATE_WINDOWS; window++) {
      const from = now - (window + 1) * windowMs;
      const to = now - window * windowMs;
      allowed = Math.max(
        allowed,
        this.answeredStarts.filter((startedAt) => startedAt >= from && startedAt < to).length,
      );
    }
    if (allowed >= MIN_ANSWERS_FOR_A_RATE) this.spacingMs = (windowMs / allowed) * SAFETY_MARGIN;
  }

  private speedUp(ticket: PacerTicket): void {
    this.answeredStarts.push(ticket.startedAt);
    const forgetBefore = this.now() - REMEMBERED_MS;
    while (this.answeredStarts.length > 0 && this.answeredStarts[0]! < forgetBefore) this.answeredStarts.shift();
    // After a 429, one more in flight per round of answers; before any, one per answer (once the
    // first second is over: until then capacity() counts time, not answers).
    this.answersTowardRaise++;
    if (this.slowStart || this.answersTowardRaise >= this.allowedInFlight) {
      this.allowedInFlight = Math.min(this.options.maxInFlight, this.allowedInFlight + 1);
      this.answersTowardRaise = 0;
    }
    if (this.spacingMs > 0 && ++this.answersSinceRelax >= RELAX_AFTER_ANSWERS) {
      this.answersSinceRelax = 0;
      this.spacingMs = this.spacingMs * RELAX_FACTOR < 1 ? 0 : this.spacingMs * RELAX_FACTOR;
    }
  }

  private pump(): void {
    // Whatever a timer was waiting for, the state has changed: decide again from now.
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length > 0) {
      const now = this.now();
      const wakeAt =
        this.inFlight >= this.capacity(now)
          ? this.nextProbeStep(now)
          : Math.max(this.resumeAt, this.lastStartAt + this.spacingMs);
      if (wakeAt === undefined) return;
      if (wakeAt > now) {
        this.timer = setTimeout(
          () => {
            this.timer = undefined;
            this.pump();
          },
          Math.ceil(wakeAt - now),
        );
        return;
      }
      if (this.inFlight >= this.capacity(now)) continue;
      const waiter = this.queue.shift()!;
      this.inFlight++;
      this.lastStartAt = now;
      this.firstStartAt ??= now;
      waiter.admit({ startedAt: now });
    }
  }

  /**
   * How many may be in flight now: what answers have earned; until the first 429, during the first
   * second only what time has (one more each PROBE_STEP_MS, whatever the answers), so a limit met
   * early is met by one request in flight, not by every one a burst of quick answers let start.
   */
  private capacity(now: number): number {
    if (!this.slowStart || this.firstStartAt === undefined) return this.allowedInFlight;
    const elapsed = now - this.firstStartAt;
    const byTime = 1 + Math.floor(elapsed / PROBE_STEP_MS);
    return Math.min(this.options.maxInFlight, elapsed < PROBE_MS ? byTime : Math.max(this.allowedInFlight, byTime));
  }

  /** When time alone lets one more start (slow start only); undefined: only an answer will. */
  private nextProbeStep(now: number): number | undefined {
    if (!this.slowStart || this.firstStartAt === undefined || this.capacity(now) >= this.options.maxInFlight)
      return undefined;
    return this.firstStartAt + PROBE_STEP_MS * (Math.floor((now - this.firstStartAt) / PROBE_STEP_MS) + 1);
  }

  /** Stops the pacer's timer and fails whoever still waits (the client is closing). */
  close(error: Error): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const waiter of this.queue.splice(0)) waiter.fail(error);
  }
}

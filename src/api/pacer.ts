/**
 * One pace for every request of a client, whichever worker sends it. A 429 is the service saying
 * "too fast": every request waits out its Retry-After (or one spacing without it), fewer run at once,
 * and requests start no closer together than a spacing learnt AIMD-style: a 429 widens it by a tenth,
 * each answer narrows it by a thousandth, so a limit is met about once per hundred answers. The first
 * spacing comes from the busiest second of answers, or, when the limiter let too few through to tell
 * (nginx `limit_req` without burst, no Retry-After), from a ramp down from 2 a second until a 429.
 * The first request runs alone, and for the first second the number in flight grows by one every
 * PROBE_STEP_MS; after a second without a 429 it grows by one per answer, up to the pool's size.
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
/** How long the number in flight grows gently at the start, before it may double each round trip. */
const PROBE_MS = 1000;
const PROBE_STEP_MS = 400;
/** How many windows back (each as long as the pause a 429 asked for, at least 1 s) the allowed rate is looked for. */
const RATE_WINDOWS = 5;
/** Fewer answers than this in the busiest window give no rate to pace by. */
const MIN_ANSWERS_FOR_A_RATE = 3;
/** The pause after a 429 when nothing tells how fast the service allows: any per-second limit has room again. */
const DEFAULT_PAUSE_MS = 1000;
/**
 * AIMD on the spacing: a 429 widens it by BACKOFF_FACTOR; each answer narrows it by PROBE_FACTOR (slow:
 * a 429 per ~95 answers), or by RAMP_FACTOR while no 429 has yet shown where the limit is.
 */
const BACKOFF_FACTOR = 1.1;
const RAMP_FACTOR = 1 / 1.25;
const PROBE_FACTOR = 0.999;
/** Where the ramp starts: two requests a second, a common limit's order of magnitude. */
const RAMP_FROM_MS = 500;
/** How many of the latest gaps between answers show the pace the service answers at. */
const RECENT_GAPS = 7;
/** The longest pause after 429s in a row without Retry-After. */
const MAX_PAUSE_MS = 8000;
/** A spacing below this is no spacing. */
const MIN_SPACING_MS = 1;

export class RequestPacer {
  private inFlight = 0;
  private allowedInFlight = 1;
  private slowStart = true;
  private firstStartAt: number | undefined;
  private answersTowardRaise = 0;
  /** After a 429 that told nothing of the rate: the spacing shrinks fast until the next 429 finds it. */
  private ramping = false;
  /**
   * The latest gaps between answers that came while another request was already in flight: the
   * service's pace, not the client's (a client waiting for one answer before it sends the next sets
   * the gaps itself, and its own slowness must not be read as the limit).
   */
  private readonly busyGaps: number[] = [];
  /** When the last answer came, if another request was in flight then. */
  private busySince: number | undefined;
  private answersSince429 = 0;
  private repeated429s = 0;
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
    // The other 429s of a burst that was already on the wire say nothing new.
    if (ticket.startedAt < this.last429At) {
      this.resumeAt = Math.max(this.resumeAt, now + (retryAfterMs ?? this.spacingMs));
      return;
    }
    this.last429At = now;
    if (this.spacingMs > 0 && this.answersSince429 === 0) {
      // Refused again with no answer between: the pause was too short, not the spacing (a fixed
      // window not yet over). Wait longer each time, as the spacing was not what failed.
      this.repeated429s++;
      const pauseMs = retryAfterMs ?? Math.min(DEFAULT_PAUSE_MS * 2 ** (this.repeated429s - 1), MAX_PAUSE_MS);
      this.resumeAt = Math.max(this.resumeAt, now + pauseMs);
      return;
    }
    this.repeated429s = 0;
    this.answersSince429 = 0;
    this.slowStart = false;
    this.answersTowardRaise = 0;
    this.allowedInFlight = Math.max(1, Math.floor((this.inFlight + 1) / 2));
    if (this.spacingMs > 0) {
      // Paced already and still refused: the limit is slower than the spacing (AIMD's decrease; after
      // the ramp, back to the last spacing answered). Never faster than the service answered while busy:
      // a limiter that queues (nginx's burst) shows its rate there long before it refuses.
      this.spacingMs = Math.max(
        this.spacingMs / (this.ramping ? RAMP_FACTOR : 1 / BACKOFF_FACTOR),
        this.answerSpacing(),
      );
      this.ramping = false;
    } else {
      const allowed = this.allowedRate(now, Math.max(retryAfterMs ?? 0, DEFAULT_PAUSE_MS));
      if (allowed !== undefined) {
        this.spacingMs = allowed * SAFETY_MARGIN;
      } else {
        // Too few answers to tell (a limit of a request or so at a time): start slow, and ramp up.
        this.spacingMs = RAMP_FROM_MS;
        this.ramping = true;
      }
    }
    // Retry-After is a floor the service set; without it, one spacing is enough for a limiter that
    // lets a request through per spacing.
    this.resumeAt = Math.max(this.resumeAt, now + (retryAfterMs ?? (this.ramping ? DEFAULT_PAUSE_MS : this.spacingMs)));
  }

  /** The mean of the latest gaps between answers the service set the pace of; 0 with too few of them. */
  private answerSpacing(): number {
    const gaps = this.busyGaps;
    return gaps.length < RECENT_GAPS ? 0 : gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
  }

  /**
   * The spacing the service allowed: the most answers in one window of the last few. The service lets
   * no more than its limit through in any window, so the busiest shows the limit, where the last alone
   * may show only a slow stretch of the client's. Undefined with too few answers to tell.
   */
  private allowedRate(now: number, windowMs: number): number | undefined {
    let allowed = 0;
    for (let window = 0; window < RATE_WINDOWS; window++) {
      const from = now - (window + 1) * windowMs;
      const to = now - window * windowMs;
      allowed = Math.max(
        allowed,
        this.answeredStarts.filter((startedAt) => startedAt >= from && startedAt < to).length,
      );
    }
    return allowed >= MIN_ANSWERS_FOR_A_RATE ? windowMs / allowed : undefined;
  }

  private speedUp(ticket: PacerTicket): void {
    this.answersSince429++;
    const now = this.now();
    if (this.busySince !== undefined) this.busyGaps.push(now - this.busySince);
    if (this.busyGaps.length > RECENT_GAPS) this.busyGaps.shift();
    this.busySince = this.inFlight > 0 ? now : undefined;
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
    // AIMD's increase: probe for a faster (or raised) limit, slowly once a 429 has shown where it is.
    if (this.spacingMs > 0) {
      this.spacingMs *= this.ramping ? RAMP_FACTOR : PROBE_FACTOR;
      if (this.spacingMs < MIN_SPACING_MS) this.spacingMs = 0;
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

/**
 * One pace for every request of a client, whichever worker sends it: requests start no closer together
 * than a spacing, and a 429 holds them all until its Retry-After (or one spacing) has passed. Until the
 * first 429 a request with nothing else in flight starts at once, and the others are spaced from 400 ms,
 * a fifth less with each answer. A 429 then sets the spacing back to the last one answered (or starts
 * that ramp, if nothing was spaced yet), and from there it is learnt AIMD-style: a 429 widens it by a
 * tenth, each answer narrows it by a thousandth, so a limit is met about once per hundred answers. It
 * is never faster than the service showed it allows: the answers of the last second when it held far
 * more back (a window's count), or the pace of its answers while others were in flight (a limiter that
 * queues, as nginx's burst does).
 */

export interface PacerOptions {
  /** The most requests in flight at once (the connection pool's size). */
  maxInFlight: number;
  now?: () => number;
}

/** An admitted attempt; given back to `finish` with what came of it. */
export interface PacerTicket {
  readonly startedAt: number;
  /** Started with nothing else in flight before any 429: no spacing held it back. */
  readonly unpaced?: boolean;
}

interface Waiter {
  admit: (ticket: PacerTicket) => void;
  fail: (error: unknown) => void;
}

/** Where the spacing starts, and how fast it shrinks per answer while no 429 has shown the limit. */
const RAMP_FROM_MS = 400;
const RAMP_FACTOR = 0.8;
const BACKOFF_FACTOR = 1.1;
const PROBE_FACTOR = 0.999;
/** Requests start this much further apart than the rate the service was seen to allow. */
const SAFETY_MARGIN = 1.05;
/** Answers are counted over this window, and it is the first pause of 429s in a row without Retry-After. */
const WINDOW_MS = 1000;
const MAX_PAUSE_MS = 8000;
/** How many of the latest gaps between answers, while others were in flight, show the service's pace. */
const RECENT_GAPS = 3;

export class RequestPacer {
  private inFlight = 0;
  private spacingMs = RAMP_FROM_MS;
  private ramping = true;
  private resumeAt = 0;
  private lastStartAt = Number.NEGATIVE_INFINITY;
  private last429At = Number.NEGATIVE_INFINITY;
  /** 429s with no answer between: a window not yet over, so the pause grows, not only the spacing. */
  private refusedInARow = 0;
  /** Start times of the attempts answered in the last window, oldest first. */
  private readonly answeredStarts: number[] = [];
  private readonly busyGaps: number[] = [];
  /** When the last answer came, if another request was in flight then. */
  private busySince: number | undefined;
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
        admit: (ticket) => (forget(), resolve(ticket)),
        fail: (error) => (forget(), reject(error)),
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
    const pause = (ms: number) => (this.resumeAt = Math.max(this.resumeAt, now + (retryAfterMs ?? ms)));
    // The other 429s of a burst that was already on the wire say nothing new.
    if (ticket.startedAt < this.last429At) return void pause(this.spacingMs);
    const firstEver = this.last429At === Number.NEGATIVE_INFINITY;
    this.last429At = now;
    if (firstEver && ticket.unpaced) {
      // Nothing was spaced yet, so nothing says how fast: ramp from the start.
      this.refusedInARow = 1;
      this.spacingMs = RAMP_FROM_MS;
      return void pause(this.spacingMs);
    }
    const allowed = this.allowedSpacing(now);
    if (this.refusedInARow++ > 0) {
      this.spacingMs = Math.max(this.spacingMs * BACKOFF_FACTOR, allowed);
      return void pause(Math.min(WINDOW_MS * 2 ** (this.refusedInARow - 2), MAX_PAUSE_MS));
    }
    if (this.spacingMs < 1) {
      // Unpaced since the ramp ended: start it again unless the answers show the limit.
      this.ramping = allowed === 0;
      this.spacingMs = this.ramping ? RAMP_FROM_MS : allowed;
    } else if (this.ramping) {
      this.spacingMs = Math.max(this.spacingMs / RAMP_FACTOR, allowed);
      this.ramping = false;
    } else {
      const busyPace = this.busyGaps.reduce((sum, gap) => sum + gap, 0) / Math.max(1, this.busyGaps.length);
      this.spacingMs = Math.max(this.spacingMs * BACKOFF_FACTOR, busyPace, allowed);
    }
    pause(this.spacingMs);
  }

  /**
   * The spacing the last window's answers show, if the service let through far fewer than the spacing
   * would have sent (else they show the client's own pace); 0 when they do not.
   */
  private allowedSpacing(now: number): number {
    const answered = this.answeredStarts.filter((startedAt) => startedAt >= now - WINDOW_MS).length;
    const heldBack = answered >= 3 && answered * this.spacingMs < WINDOW_MS / 2;
    return heldBack ? (WINDOW_MS / answered) * SAFETY_MARGIN : 0;
  }

  private speedUp(ticket: PacerTicket): void {
    const now = this.now();
    this.refusedInARow = 0;
    if (this.busySince !== undefined) this.busyGaps.push(now - this.busySince);
    if (this.busyGaps.length > RECENT_GAPS) this.busyGaps.shift();
    this.busySince = this.inFlight > 0 ? now : undefined;
    this.answeredStarts.push(ticket.startedAt);
    while (this.answeredStarts[0]! < now - WINDOW_MS) this.answeredStarts.shift();
    this.spacingMs *= this.ramping ? RAMP_FACTOR : PROBE_FACTOR;
  }

  private pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const now = this.now();
      const unpaced = this.inFlight === 0 && this.last429At === Number.NEGATIVE_INFINITY;
      // A spacing under a millisecond is no spacing.
      const wakeAt = unpaced
        ? now
        : Math.max(this.resumeAt, this.spacingMs < 1 ? 0 : this.lastStartAt + this.spacingMs);
      if (wakeAt > now) {
        this.timer = setTimeout(() => this.pump(), Math.ceil(wakeAt - now));
        return;
      }
      this.inFlight++;
      this.lastStartAt = now;
      this.queue.shift()!.admit({ startedAt: now, unpaced });
    }
  }

  /** Stops the pacer's timer and fails whoever still waits (the client is closing). */
  close(error: Error): void {
    clearTimeout(this.timer);
    for (const waiter of this.queue.splice(0)) waiter.fail(error);
  }
}

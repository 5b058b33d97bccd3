/**
 * Watches the attempts in flight, so a person at a terminal hears about a request that has waited
 * a while for its answer (a silent server, a stalled proxy) instead of staring at a frozen screen.
 * The client only tells (onWaiting); the CLI decides how to show it.
 */

export interface WaitNotice {
  /** `api.example.com:443`. */
  where: string;
  /** How long the longest-waiting attempt in flight has waited. */
  waitedMs: number;
}

/** An attempt is reported once it has waited this long; a healthy answer comes well before. */
const WAIT_NOTICE_AFTER_MS = 3000;
const CHECK_EVERY_MS = 1000;

export class WaitWatch {
  /** Start times of the attempts in flight. */
  private readonly started = new Set<{ at: number }>();
  private timer: NodeJS.Timeout | undefined;
  private told = false;

  constructor(
    private readonly where: string,
    private readonly onWaiting: (notice: WaitNotice | undefined) => void,
  ) {}

  start(): { at: number } {
    const attempt = { at: performance.now() };
    this.started.add(attempt);
    // The requests keep the process alive; the watch alone must not.
    this.timer ??= setInterval(() => this.check(), CHECK_EVERY_MS).unref();
    return attempt;
  }

  end(attempt: { at: number }): void {
    this.started.delete(attempt);
    if (this.started.size === 0) this.close();
  }

  close(): void {
    this.started.clear();
    clearInterval(this.timer);
    this.timer = undefined;
    this.check();
  }

  /** Tells of the longest wait once it is long, and once more (undefined) when it no longer is. */
  private check(): void {
    const oldest = Math.min(...[...this.started].map((attempt) => attempt.at));
    const waitedMs = performance.now() - oldest;
    if (waitedMs >= WAIT_NOTICE_AFTER_MS) this.onWaiting({ where: this.where, waitedMs });
    else if (this.told) this.onWaiting(undefined);
    this.told = waitedMs >= WAIT_NOTICE_AFTER_MS;
  }
}

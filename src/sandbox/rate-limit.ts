/**
 * Per-key request rate limit (contract row 12): at most N requests in each one-second window per key.
 * A window opens with the first request after the previous one closed; a refused request does not count.
 */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export class RateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => Date.now(),
  ) {}

  check(key: string): RateDecision {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || now - window.start >= 1000) {
      window = { start: now, count: 0 };
      this.windows.set(key, window);
    }
    if (window.count < this.perSecond) {
      window.count++;
      return { allowed: true };
    }
    // Whole seconds, never 0: a client honouring it waits at least until the window closes.
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((window.start + 1000 - now) / 1000)) };
  }
}

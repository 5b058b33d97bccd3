/**
 * The answers the sandbox keeps open on purpose: those waiting out an injected delay, and those a
 * fault leaves without an end (no-response, stall-mid-body). Closing the server ends them all.
 */
import type { ServerResponse } from 'node:http';

export class OpenResponses {
  private readonly delayed = new Set<{ timer: NodeJS.Timeout; res: ServerResponse }>();
  private readonly held = new Set<ServerResponse>();

  /** Resolves after `ms`, unless the server closes first (then the response is destroyed). */
  delay(ms: number, res: ServerResponse): Promise<void> {
    return new Promise((resolve) => {
      const entry = {
        res,
        timer: setTimeout(() => {
          this.delayed.delete(entry);
          resolve();
        }, ms),
      };
      this.delayed.add(entry);
    });
  }

  /** Keeps a response open with nothing more to send; closeAll() ends it. */
  hold(res: ServerResponse): void {
    if (res.destroyed) return;
    this.held.add(res);
    res.once('close', () => this.held.delete(res));
  }

  closeAll(): void {
    for (const { timer, res } of this.delayed) {
      clearTimeout(timer);
      res.destroy();
    }
    this.delayed.clear();
    for (const res of this.held) res.destroy();
    this.held.clear();
  }
}

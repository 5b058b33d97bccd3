/**
 * Cancellation of attempts and of the waits between them: by the caller's signal (SIGINT), by
 * close(), or by an attempt's own deadline.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export interface AttemptSignal {
  signal: AbortSignal;
  readonly timedOut: boolean;
  dispose(): void;
}

/** A signal that fires when any of the parents does; dispose() removes its listeners. */
export function linkSignals(parents: readonly AbortSignal[]): { controller: AbortController; dispose(): void } {
  const controller = new AbortController();
  const onParentAbort = (): void => controller.abort(new Error('stopped'));
  for (const parent of parents) {
    if (parent.aborted) onParentAbort();
    else parent.addEventListener('abort', onParentAbort, { once: true });
  }
  return {
    controller,
    dispose() {
      for (const parent of parents) parent.removeEventListener('abort', onParentAbort);
    },
  };
}

/**
 * One signal per attempt that fires when any stop signal does (the caller's, close()) or on the
 * attempt's own deadline (covering headers and the whole body; undici's body timeout alone is
 * only an idle timer). Built by hand rather than with AbortSignal.any so that no listener is
 * left on the long-lived signals after thousands of requests.
 */
export function createAttemptSignal(parents: readonly AbortSignal[], timeoutMs: number): AttemptSignal {
  const linked = linkSignals(parents);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    linked.controller.abort(new Error(`timed out after ${timeoutMs} ms`));
  }, timeoutMs);
  return {
    signal: linked.controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      clearTimeout(timer);
      linked.dispose();
    },
  };
}

/** Sleeps between attempts; any stop signal (the caller's, close()) cuts the wait short. */
export async function waitUnlessStopped(
  ms: number,
  stopSignals: readonly AbortSignal[],
  stoppedError: () => Error | undefined,
): Promise<void> {
  const linked = linkSignals(stopSignals);
  try {
    await sleep(ms, undefined, { signal: linked.controller.signal });
  } catch (error) {
    throw stoppedError() ?? error;
  } finally {
    linked.dispose();
  }
}

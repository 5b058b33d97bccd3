import pLimit, { type LimitFunction } from 'p-limit';

/**
 * Runs async tasks with bounded concurrency and hands back their results in submission order,
 * whatever order they finish in. Results that finish early wait; at most `window` tasks are
 * started ahead of the oldest unfinished one, so memory stays bounded on any input size.
 * The oldest result is handed back as soon as it is ready, even while the next input is still
 * to come: a streamed input that pauses (a producer between two pages) must neither hold back the
 * output nor hide a failed task until the window fills.
 */
export async function* mapInOrder<In, Out>(
  inputs: AsyncIterable<In> | Iterable<In>,
  window: number,
  task: (input: In) => Promise<Out>,
): AsyncGenerator<Out> {
  const iterator = Symbol.asyncIterator in inputs ? inputs[Symbol.asyncIterator]() : inputs[Symbol.iterator]();
  const pending: Array<Promise<Out>> = [];
  let next: Promise<IteratorResult<In>> | undefined;
  let exhausted = false;
  for (;;) {
    if (!exhausted && next === undefined && pending.length < window) next = Promise.resolve(iterator.next());
    if (next === undefined) {
      if (pending.length === 0) return;
      yield await pending.shift()!;
      continue;
    }
    if (pending.length > 0 && (await Promise.race([next.then(() => false), settled(pending[0]!)]))) {
      yield await pending.shift()!;
      continue;
    }
    const result = await next;
    next = undefined;
    if (result.done) {
      exhausted = true;
      continue;
    }
    const started = task(result.value);
    // A rejection is observed when its turn comes; until then keep Node from calling it unhandled.
    started.catch(() => {});
    pending.push(started);
  }
}

function settled(promise: Promise<unknown>): Promise<boolean> {
  return promise.then(
    () => true,
    () => true,
  );
}

/** A counting semaphore: at most `size` holders at once (p-limit's queue, first come first served). */
export class Semaphore {
  private readonly limit: LimitFunction;

  constructor(size: number) {
    this.limit = pLimit(size);
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.limit(work);
  }
}

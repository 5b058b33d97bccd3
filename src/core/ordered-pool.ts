/**
 * Runs async tasks with bounded concurrency and hands back their results in submission order,
 * whatever order they finish in. Results that finish early wait; at most `window` tasks are
 * started ahead of the oldest unfinished one, so memory stays bounded on any input size.
 */
export async function* mapInOrder<In, Out>(
  inputs: AsyncIterable<In> | Iterable<In>,
  window: number,
  task: (input: In) => Promise<Out>,
): AsyncGenerator<Out> {
  const pending: Array<Promise<Out>> = [];
  for await (const input of inputs) {
    const started = task(input);
    // A rejection is observed when its turn comes; until then keep Node from calling it unhandled.
    started.catch(() => {});
    pending.push(started);
    if (pending.length >= window) yield await pending.shift()!;
  }
  while (pending.length > 0) yield await pending.shift()!;
}

/** A counting semaphore: at most `size` holders at once. */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active += 1;
    try {
      return await work();
    } finally {
      this.active -= 1;
      this.waiting.shift()?.();
    }
  }
}

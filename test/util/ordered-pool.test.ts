import { describe, expect, it } from 'vitest';
import { mapInOrder } from '../../src/util/ordered-pool.js';

describe('mapInOrder', () => {
  it('keeps submission order whatever order tasks finish in', async () => {
    const delays = [30, 0, 20, 5, 10, 0, 15];
    const results: number[] = [];
    for await (const value of mapInOrder(delays.keys(), 3, async (index) => {
      await new Promise((resolve) => setTimeout(resolve, delays[index]));
      return index;
    })) {
      results.push(value);
    }
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('hands back a finished result while the next input is still to come, and a failure too', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    async function* input(): AsyncGenerator<number> {
      yield 1;
      await held;
      yield 2;
    }
    const results = mapInOrder(input(), 8, async (value) => value * 10);
    expect(await results.next()).toEqual({ done: false, value: 10 });
    release();
    expect(await results.next()).toEqual({ done: false, value: 20 });
    expect((await results.next()).done).toBe(true);

    const failing = mapInOrder(
      (async function* () {
        yield 1;
        await new Promise(() => {}); // a producer that never writes again
      })(),
      8,
      async () => {
        throw new Error('403');
      },
    );
    await expect(failing.next()).rejects.toThrow('403');
  });
});

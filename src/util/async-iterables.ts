/** The items `keep` lets through, as they arrive: filters a stream without holding it. */
export async function* keptItems<T>(items: AsyncIterable<T>, keep: (item: T) => boolean): AsyncGenerator<T> {
  for await (const item of items) if (keep(item)) yield item;
}

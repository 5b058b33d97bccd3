/** Per-technology lists of companies, inverted from the stacks: the generated dataset and each month's crawl. */
export interface StackColumns {
  /** Company i's stack is techs[techOffsets[i] .. techOffsets[i+1]), ascending catalog indices. */
  techOffsets: Uint32Array;
  techs: Uint16Array;
  /** Technology t's companies are postings[postingOffsets[t] .. postingOffsets[t+1]), ascending. */
  postingOffsets: Uint32Array;
  postings: Uint32Array;
}

/** Inverts the stacks into per-technology lists of companies; iterating companies in order keeps them sorted. */
export function buildPostings(
  techOffsets: Uint32Array,
  techs: Uint16Array,
  catalogSize: number,
): { postingOffsets: Uint32Array; postings: Uint32Array } {
  const counts = new Uint32Array(catalogSize + 1);
  for (let k = 0; k < techs.length; k++) counts[(techs[k] as number) + 1]! += 1;
  const postingOffsets = new Uint32Array(catalogSize + 1);
  for (let t = 0; t < catalogSize; t++)
    postingOffsets[t + 1] = (postingOffsets[t] as number) + (counts[t + 1] as number);
  const cursor = postingOffsets.slice(0, catalogSize);
  const postings = new Uint32Array(techs.length);
  const companies = techOffsets.length - 1;
  for (let i = 0; i < companies; i++) {
    for (let k = techOffsets[i] as number; k < (techOffsets[i + 1] as number); k++) {
      const t = techs[k] as number;
      postings[cursor[t] as number] = i;
      cursor[t] = (cursor[t] as number) + 1;
    }
  }
  return { postingOffsets, postings };
}

/**
 * Company 0's stack, then company 1's, … end to end in one array (the `techs` and `techOffsets` of
 * StackColumns), grown as needed from `capacity`; `stackOf` is called once per company, in order.
 */
export function packStacks(
  companies: number,
  capacity: number,
  stackOf: (i: number) => ArrayLike<number>,
): { techOffsets: Uint32Array; techs: Uint16Array } {
  const techOffsets = new Uint32Array(companies + 1);
  let techs = new Uint16Array(capacity);
  let used = 0;
  for (let i = 0; i < companies; i++) {
    const stack = stackOf(i);
    if (used + stack.length > techs.length) {
      const grown = new Uint16Array(Math.ceil(techs.length * 1.5) + stack.length);
      grown.set(techs.subarray(0, used));
      techs = grown;
    }
    techs.set(stack, used);
    used += stack.length;
    techOffsets[i + 1] = used;
  }
  return { techOffsets, techs: techs.slice(0, used) };
}

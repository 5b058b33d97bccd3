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

/** The months of the sandbox's crawls (crawl.ts), light enough for `prospect sandbox`'s start-up. */

/** The month the generated dataset was crawled: a sandbox asked for no month serves it. */
export const REFERENCE_CRAWL = '2025-06';

/** A month written YYYY-MM. */
export function isCrawlMonth(text: string): boolean {
  return /^\d{4}-(0[1-9]|1[0-2])$/.test(text);
}

/** Months since year 0: the difference of two is how many months apart they are. */
export function monthNumber(month: string): number {
  return Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1;
}

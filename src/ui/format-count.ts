/**
 * 12400 → "12,400", as `toLocaleString('en-US')` writes a whole number, without it: the first toLocaleString
 * maps ICU's locale data into memory, and these counts are formatted on every page of an export.
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return n < 0 ? `-${digits}` : digits;
}

/**
 * A count with its noun, singular or plural as the count asks: "1 unit", "0 units", "12,400 units".
 * `plural` for nouns that do not just take an s ("1 address", "2 addresses").
 */
export function countOf(n: number, singular: string, plural = `${singular}s`): string {
  return `${formatCount(n)} ${n === 1 ? singular : plural}`;
}

/**
 * The names of the sandbox's variants (`prospect sandbox --variant NAME`), each another decision a real
 * data API makes for an open point of docs/api-contract.md, for checking the flag (a start-up module:
 * README "Start-up"). What each one does is in variants.ts.
 */

export const VARIANT_NAMES = [
  // Paging (rows 1a, 1b, 2)
  'paging-link-header',
  'paging-meta-next-cursor',
  'paging-next-url',
  'paging-link-params',
  'paging-next-relative',
  'paging-has-more',
  'paging-offset',
  'cursor-param-page-token',
  'cursor-param-after',
  'cursor-nonce',
  'page-size-per-page',
  'page-size-capped',
  'cursor-number',
  'has-more-null-cursor',
  // Companies answers (rows 14-17, 30)
  'null-optional-fields',
  'numeric-strings',
  'no-meta',
  'envelope-results',
  'envelope-nested',
  'meta-count',
  'upper-case-fields',
  // Contacts answers (rows 19, 25)
  'contact-fields-email',
  'contact-date-dmy',
  'contact-date-epoch',
  'contact-date-time',
  'contact-date-zone',
  'contacts-grouped',
  'contact-emails-array',
  'contact-empty-strings',
  // Verification vocabularies (row 22)
  'verify-deliverable',
  'verify-zerobounce',
  'verify-neverbounce',
  'verify-upper-case',
  'verify-millionverifier',
  'verify-result-envelope',
  'verify-is-valid',
  // Error bodies (row 8)
  'errors-message',
  'errors-array',
  'errors-problem-json',
  'rate-limit-no-retry-after',
  // A verify endpoint that refuses (rows 22, 23)
  'verify-path-moved',
  'verify-post-only',
  'verify-param-address',
  'verify-no-credits',
  'verify-credits-run-out',
] as const;

export type VariantName = (typeof VARIANT_NAMES)[number];

export function isVariantName(name: string): name is VariantName {
  return (VARIANT_NAMES as readonly string[]).includes(name);
}

/**
 * The contract as data (issue 42): each open point the client relies on, what it recognises on its own, and the
 * setting where it cannot guess. A test holds docs/api-contract.md equal to it. Imports nothing: config reads it.
 */

export const OPEN_POINTS = [
  {
    row: '1a',
    recognises:
      'A cursor sent back under another name cannot be guessed: a page that repeats an earlier one, or the ' +
      'same cursor twice, is exit 5 naming the setting.',
    setting: 'cursor-param',
  },
  {
    row: '1b',
    recognises:
      'The next page in `next_cursor` or `meta.next_cursor` (text or a number; absent, `null` or `""`: the ' +
      'last page), in an RFC 8288 `Link: <…>; rel="next"` header, or as a `next` URL of the same origin ' +
      "(another host is refused: the key never goes there). `has_more` with the last row's id needs " +
      '`cursor-param`. A listing that ends before its own `meta.total` is exit 5, never a short file.',
    setting: null,
  },
  {
    row: '1b',
    recognises: 'Offsets are not guessed: `paging offset` sends `offset-param` (default `offset`) instead.',
    setting: 'paging',
  },
  { row: '1b', recognises: 'With `paging offset`, the parameter that carries the offset.', setting: 'offset-param' },
  {
    row: '2',
    recognises: "Accepts pages of any size, smaller than asked included; the parameter's name is a setting.",
    setting: 'page-size-param',
  },
  { row: '2', recognises: "Asks for `limit=1000`, or the setting's lower bound.", setting: 'page-size-max' },
  {
    row: '14',
    recognises:
      'Unknown fields are kept and passed through to JSON output, each up to 64 Ki values and characters ' +
      '(`src/api/schema-bounds.ts`); `null` for any field but `domain`; ' +
      'integers sent as numeric strings (`"1234"`); the rows under `data` or under the one array-valued ' +
      'key of the envelope (`results`, `companies`, `items`).',
    setting: null,
  },
  { row: '17', recognises: 'Every field of `meta`, and `meta` itself, optional.', setting: null },
  {
    row: '8',
    recognises:
      'Code, reason and suggestions from `{"error":{…}}`, `{"error":"…"}`, `{"message":…}`, `{"errors":[…]}` ' +
      'and RFC 9457 problem+json (`type`, `title`, `detail`); any other body still yields the status and a ' +
      'generic reason.',
    setting: null,
  },
  {
    row: '7c',
    recognises:
      'A 422 whose code is not one of them is read by its words: suggestions, valid values or a refusal of a ' +
      'value ("unknown", "not found", "invalid", "did you mean") make it an input error of the filter it names ' +
      '(exit 2); words of an empty result ("no match", "no results") make it `no_match` (exit 3); input first, ' +
      'so a misspelt name never reads as "nobody matched". A 422 that says neither, or gives no reason, is exit 5.',
    setting: null,
  },
  {
    row: '18a',
    recognises: 'A bare array, or the one array-valued key of the envelope (`contacts`, `results`, `items`).',
    setting: null,
  },
  {
    row: '19',
    recognises:
      'Only `domain` is required; other fields default to `null`, and `""` reads as `null`; unknown fields pass ' +
      'through. An answer with no `business_email` or no `business_email_last_seen` on any row is exit 5 ' +
      'naming the fields it has and the setting (`ours=theirs` pairs).',
    setting: 'contact-fields',
  },
  {
    row: '25',
    recognises:
      'ISO dates, date-times (a zoned one as the UTC date of its instant, others truncated) and epoch ' +
      'seconds. An answer whose dates are none of these is exit 5 showing one, until the setting says ' +
      '`dmy` or `mdy`; one unparseable date counts as unknown freshness.',
    setting: 'date-format',
  },
  { row: '22', recognises: 'The path of the paid check is a setting.', setting: 'verify-path' },
  { row: '22', recognises: '`GET`, or `POST` with a JSON body.', setting: 'verify-method' },
  {
    row: '22',
    recognises: 'The name of the parameter (or JSON field) that carries the address.',
    setting: 'verify-param',
  },
  {
    row: '22',
    recognises:
      'The common vocabularies mapped onto those four (`deliverable`, `undeliverable`, `accept_all`, ' +
      "`catch_all`, `do_not_mail`, `spamtrap`, `abuse`, …), the service's own words kept, with " +
      "the verdict each was read as, in the run record's `service_words`. A word it does not know is " +
      '`unknown`, never `valid`: the run writes its rows and exits 5 naming the words, counted, and the ' +
      'setting (`theirs=ours` pairs).',
    setting: 'verify-statuses',
  },
] as const satisfies readonly { row: string; recognises: string; setting: string | null }[];
export type OpenPoint = (typeof OPEN_POINTS)[number];

/** The settings that adapt the client to a service, by the names the configuration gives them. */
export type ContractSetting = NonNullable<OpenPoint['setting']>;
export const CONTRACT_SETTINGS: readonly ContractSetting[] = OPEN_POINTS.flatMap((point) =>
  point.setting === null ? [] : [point.setting],
);

/** What the four verdicts are; a service's word is mapped onto one of them. */
export const VERDICTS = ['valid', 'invalid', 'risky', 'unknown'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** How the client reads a service that decided an open point otherwise: the settings, at their defaults. */
export const CONTRACT_DEFAULTS = {
  paging: 'cursor' as 'cursor' | 'offset',
  offsetParam: 'offset',
  pageSizeParam: 'limit',
  pageSizeMax: 1000,
  /** Ours → theirs: `business_email` → `email`. */
  contactFields: {} as Readonly<Record<string, string>>,
  dateFormat: 'iso' as 'iso' | 'dmy' | 'mdy',
  verifyPath: '/api/v1/verify',
  verifyMethod: 'GET' as 'GET' | 'POST',
  verifyParam: 'email',
  /** Theirs → ours, on top of the vocabularies the client knows. */
  verifyStatuses: {} as Readonly<Record<string, Verdict>>,
};
export type ContractSettings = typeof CONTRACT_DEFAULTS;

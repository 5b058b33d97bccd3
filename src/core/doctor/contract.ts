/**
 * `doctor` proves the contract (issue 42): free calls only, each open point the client relies on
 * checked against what the service answers, and said as `matches`, `differs` (with the setting that
 * adapts to it, or that the client reads it on its own) or `could not tell`. Never /verify: that is
 * verify-check.ts, only with `--verify ADDRESS`.
 */
import { RequestError, type ContractSetting, type ProbeAnswer, type ProspectClient } from '../../api/index.js';
import { nextLink, textCursor } from '../../api/paging.js';

/** A setting's name, checked against the one list of them (src/api/contract.ts). */
const setting = (name: ContractSetting): ContractSetting => name;

export interface Verdict {
  point: string;
  result: 'matches' | 'differs' | 'could not tell';
  /** The setting that adapts the client, for a point that differs; none: the client reads it on its own. */
  setting?: string;
  detail: string;
}

export const matches = (point: string, detail: string): Verdict => ({ point, result: 'matches', detail });
export const recognised = (point: string, detail: string): Verdict => ({
  point,
  result: 'differs',
  detail: `${detail}; the client reads it on its own`,
});
export const needs = (point: string, setting: string, detail: string): Verdict => ({
  point,
  result: 'differs',
  setting,
  detail,
});
export const unknown = (point: string, detail: string): Verdict => ({ point, result: 'could not tell', detail });

type Json = Record<string, unknown>;
const objectOf = (value: unknown): Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};

/** The rows of a listing: under `data`, or the one array of the body (or the body itself). */
function rowsOf(body: unknown): { key: string | undefined; rows: Json[] } {
  if (Array.isArray(body)) return { key: '(a bare array)', rows: body.map(objectOf) };
  const arrays = Object.entries(objectOf(body)).filter(([, value]) => Array.isArray(value));
  const [key, rows] = arrays.find(([name]) => name === 'data') ?? (arrays.length === 1 ? arrays[0]! : [undefined, []]);
  return { key, rows: (rows as unknown[]).map(objectOf) };
}

interface NextSignal {
  how: string;
  cursor?: string;
  /** The parameter the service names in a next-page URL. */
  param?: string;
}

function nextSignalOf(answer: ProbeAnswer, cursorParam: string): NextSignal | undefined {
  const body = objectOf(answer.body);
  const cursor = textCursor(body.next_cursor);
  if (cursor !== null) return { how: 'next_cursor', cursor };
  const metaCursor = textCursor(objectOf(body.meta).next_cursor);
  if (metaCursor !== null) return { how: 'meta.next_cursor', cursor: metaCursor };
  const linked = nextLink(answer.headers.link) ?? undefined;
  const url = linked ?? (typeof body.next === 'string' ? body.next : undefined);
  if (url !== undefined) return { how: linked ? 'a Link header' : 'a next URL', ...cursorInUrl(url, cursorParam) };
  if (body.has_more === true) return { how: 'has_more' };
  return undefined;
}

/** The cursor in a next-page URL: the parameter named as the client's, or the one that is not a filter. */
function cursorInUrl(url: string, cursorParam: string): { cursor?: string; param?: string } {
  const query = new URL(url, 'http://service.invalid').searchParams;
  const own = query.get(cursorParam);
  if (own !== null) return { cursor: own, param: cursorParam };
  const other = [...query].find(([name]) => !['technology', 'limit'].includes(name));
  return other ? { cursor: other[1], param: other[0] } : {};
}

/** Paging: two pages at limit=1, the next-page signal, a cursor that moves; and the envelope and fields. */
export async function pagingVerdicts(
  client: Pick<ProspectClient, 'probe'>,
  technology: string,
  cursorParam: string,
): Promise<Verdict[]> {
  const first = await client.probe('/companies', [
    ['technology', technology],
    ['limit', '1'],
  ]);
  const { key, rows } = rowsOf(first.body);
  const verdicts = [envelopeVerdict(key), ...companyFieldVerdicts(first.body, rows)];
  verdicts.push(
    key === undefined
      ? unknown('page size', 'no array of rows to count')
      : rows.length === 1
        ? matches('page size', 'limit=1 gave 1 row')
        : needs('page size', `${setting('page-size-param')} NAME`, `limit=1 gave ${rows.length} rows`),
  );
  const signal = nextSignalOf(first, cursorParam);
  const total = Number(objectOf(objectOf(first.body).meta).total);
  if (signal === undefined) {
    verdicts.push(
      total > rows.length
        ? needs('next page', `${setting('paging')} offset`, `no next-page signal, while meta.total is ${total}`)
        : unknown('next page', 'a single page: no next page to look for'),
    );
    return verdicts;
  }
  if (signal.how === 'has_more')
    return [...verdicts, needs('next page', `${setting('paging')} offset`, 'has_more, with no cursor to follow')];
  verdicts.push(
    signal.how === 'next_cursor'
      ? matches('next page', 'next_cursor')
      : recognised('next page', `the next page is in ${signal.how}`),
  );
  verdicts.push(await cursorVerdict(client, technology, cursorParam, signal, rows[0]?.domain));
  return verdicts;
}

async function cursorVerdict(
  client: Pick<ProspectClient, 'probe'>,
  technology: string,
  cursorParam: string,
  signal: NextSignal,
  firstDomain: unknown,
): Promise<Verdict> {
  if (signal.param !== undefined && signal.param !== cursorParam)
    return needs(
      'cursor',
      `${setting('cursor-param')} ${signal.param}`,
      `the next page is asked with "${signal.param}"`,
    );
  if (signal.cursor === undefined) return unknown('cursor', `${signal.how} names no cursor`);
  const second = await client.probe('/companies', [
    ['technology', technology],
    ['limit', '1'],
    [cursorParam, signal.cursor],
  ]);
  const next = rowsOf(second.body).rows[0]?.domain;
  if (next === undefined) return unknown('cursor', 'the second page was empty');
  if (next === firstDomain)
    return needs(
      'cursor',
      `${setting('cursor-param')} NAME`,
      `the page asked with "${cursorParam}" repeated the first`,
    );
  // Asked again, the first page names its next page: a new string each time is a nonce.
  const again = nextSignalOf(
    await client.probe('/companies', [
      ['technology', technology],
      ['limit', '1'],
    ]),
    cursorParam,
  );
  return again?.cursor === signal.cursor
    ? matches('cursor', `"${cursorParam}" moves to the next page`)
    : recognised('cursor', 'a new cursor string for the same page each time');
}

function envelopeVerdict(key: string | undefined): Verdict {
  if (key === 'data') return matches('envelope', 'rows under "data"');
  return key === undefined
    ? unknown('envelope', 'no array of rows in the answer')
    : recognised('envelope', `rows under "${key}"`);
}

function companyFieldVerdicts(body: unknown, rows: Json[]): Verdict[] {
  const row = rows[0];
  if (row === undefined) return [unknown('company fields', 'no row to read')];
  const fields =
    typeof row.domain !== 'string'
      ? unknown('company fields', 'no domain in the row')
      : typeof row.crux_rank === 'string'
        ? recognised('company fields', 'crux_rank is a numeric string')
        : matches('company fields', 'domain, crux_rank as the contract has them');
  const meta = objectOf(body).meta;
  const total = objectOf(meta).total;
  const metaVerdict =
    meta === undefined
      ? recognised('companies meta', 'no meta')
      : typeof total === 'number'
        ? matches('companies meta', 'meta.total a number')
        : recognised('companies meta', `meta.total is ${JSON.stringify(total)}`);
  return [fields, metaVerdict];
}

/** One contacts call of a few domains (free), if the plan allows it: the email field and its date. */
export async function contactsVerdicts(client: Pick<ProspectClient, 'probe'>, technology: string): Promise<Verdict[]> {
  const listed = await client.probe('/companies', [
    ['technology', technology],
    ['limit', '20'],
  ]);
  const domains = rowsOf(listed.body)
    .rows.map((row) => row.domain)
    .filter((domain): domain is string => typeof domain === 'string');
  if (domains.length === 0) return [unknown('contact fields', 'no company to ask contacts of')];
  let answer: ProbeAnswer;
  try {
    answer = await client.probe('/contacts', [
      ['domain', domains.join(',')],
      ['limit', '20'],
    ]);
  } catch (error) {
    if (error instanceof RequestError && error.status === 403)
      return [unknown('contact fields', "contacts are not on this key's plan (403)")];
    throw error;
  }
  const rows = rowsOf(answer.body).rows.filter((row) => Object.keys(row).some((k) => /mail/i.test(k)));
  if (rows.length === 0) return [unknown('contact fields', 'no contact with an email field in the answer')];
  const keys = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  // Never the date field as the email: business_email_last_seen matches /mail/ too.
  const email = keys.includes('business_email')
    ? 'business_email'
    : keys.find((k) => /mail/i.test(k) && k !== 'business_email_last_seen');
  const seen = keys.includes('business_email_last_seen')
    ? 'business_email_last_seen'
    : keys.find((k) => /seen|confirmed|last|date/i.test(k));
  const fields =
    email === 'business_email' && seen === 'business_email_last_seen'
      ? matches('contact fields', 'business_email and business_email_last_seen')
      : needs(
          'contact fields',
          `${setting('contact-fields')} business_email=${email ?? '?'},business_email_last_seen=${seen ?? '?'}`,
          `the answer has ${keys.join(', ')}`,
        );
  const dates = rows.map((row) => (seen === undefined ? undefined : row[seen])).filter((d) => d != null);
  return [fields, dateVerdict(dates)];
}

function dateVerdict(dates: unknown[]): Verdict {
  if (dates.length === 0) return unknown('contact dates', 'no date in the answer');
  const texts = dates.map(String);
  if (texts.every((d) => /^\d{4}-\d{2}-\d{2}$/.test(d))) return matches('contact dates', 'ISO dates');
  if (dates.every((d) => typeof d === 'number') || texts.every((d) => /^\d{4}-\d{2}-\d{2}T/.test(d)))
    return recognised('contact dates', `dates like ${texts[0]}`);
  const slashed = texts.map((d) => /^(\d{1,2})\/(\d{1,2})\/\d{4}$/.exec(d)).filter((m) => m !== null);
  if (slashed.length !== texts.length) return unknown('contact dates', `dates like ${texts[0]}`);
  const dayFirst = slashed.some((m) => Number(m[1]) > 12);
  const monthFirst = slashed.some((m) => Number(m[2]) > 12);
  const format = dayFirst && !monthFirst ? 'dmy' : monthFirst && !dayFirst ? 'mdy' : 'dmy or mdy';
  return needs('contact dates', `${setting('date-format')} ${format}`, `dates like ${texts[0]}`);
}

/** Error bodies: an unknown technology (422 with code and suggestions), a bad parameter (400). */
export async function errorVerdicts(client: Pick<ProspectClient, 'probe'>, technology: string): Promise<Verdict[]> {
  const misspelt = await refusalOf(client, [
    ['technology', `${technology}zq`],
    ['limit', '1'],
  ]);
  const badParameter = await refusalOf(client, [
    ['technology', technology],
    ['limit', '0'],
  ]);
  return [
    misspelt === undefined
      ? unknown('error body', 'a misspelt technology was not refused')
      : misspelt.code === 'unknown_technology' && misspelt.details['error_body_shape'] !== undefined
        ? {
            point: 'error body',
            result: 'differs',
            detail: `${misspelt.status} unknown_technology, read from ${String(misspelt.details['error_body_shape'])}`,
          }
        : misspelt.code === 'unknown_technology'
          ? matches('error body', `${misspelt.status} unknown_technology, with its reason`)
          : {
              point: 'error body',
              result: 'differs',
              detail: `${misspelt.status} with no code to read (${misspelt.reason})`,
            },
    badParameter === undefined
      ? needs(
          'bad parameter',
          `${setting('page-size-param')} NAME`,
          'limit=0 was not refused: the service ignores "limit"',
        )
      : badParameter.status === 400
        ? matches('bad parameter', `400${badParameter.code ? ` ${badParameter.code}` : ''}`)
        : unknown('bad parameter', `limit=0 got ${badParameter.status}`),
  ];
}

async function refusalOf(
  client: Pick<ProspectClient, 'probe'>,
  params: ReadonlyArray<readonly [string, string]>,
): Promise<RequestError | undefined> {
  try {
    await client.probe('/companies', params);
    return undefined;
  } catch (error) {
    if (error instanceof RequestError && error.status !== undefined && error.status >= 400 && error.status < 500)
      return error;
    throw error;
  }
}

/**
 * A deliberately plain client, written apart from src/api: undici.request and JSON.parse only, so
 * tests compare prospect's output with something it did not produce. Every test that talks to a
 * sandbox or the service without prospect goes through here.
 */
import { request } from 'undici';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Parsed JSON body (undefined when empty). */
  body: any;
}

/** GET (or another method) with an optional key, as plain as possible. */
export async function call(
  base: string,
  pathAndQuery: string,
  options: { key?: string; authorization?: string; method?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  else if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  const method = (options.method ?? 'GET') as 'GET';
  const send = () => request(`${base}${pathAndQuery}`, { method, headers });
  // A GET that meets a reset connection is sent once more: a pooled idle socket can be closed by the
  // sandbox's keep-alive timer just as the call goes out on it. Both timers run in the test process,
  // so after a test has held the event loop for seconds their order is a race, not a finding.
  const response = await send().catch((error: { code?: string }) => {
    if (method === 'GET' && (error.code === 'ECONNRESET' || error.code === 'UND_ERR_SOCKET')) return send();
    throw error;
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
}

/** A query string from pairs, encoded the way browsers and URLSearchParams do. */
export function qs(params: Record<string, string | number | undefined>): string {
  const defined = Object.entries(params).filter(([, v]) => v !== undefined) as Array<[string, string | number]>;
  return new URLSearchParams(defined.map(([k, v]): [string, string] => [k, String(v)])).toString();
}

/** A whole companies listing paged by hand, following next_cursor: every page's body, in order. */
export async function allCompanyPages(
  base: string,
  key: string,
  params: Record<string, string | number>,
): Promise<any[]> {
  const pages: any[] = [];
  let cursor: string | null = null;
  do {
    const { status, text, body } = await call(
      base,
      `/api/v1/companies?${qs({ limit: 1000, ...params, cursor: cursor ?? undefined })}`,
      { key },
    );
    if (status !== 200) throw new Error(`companies answered ${status}: ${text}`);
    pages.push(body);
    cursor = body.next_cursor || null;
  } while (cursor !== null && pages.length < 10_000);
  return pages;
}

/** The rows of a whole companies listing. */
export async function allCompanies(base: string, key: string, params: Record<string, string | number>): Promise<any[]> {
  return (await allCompanyPages(base, key, params)).flatMap((page) => page.data);
}

/**
 * The contacts of one domain, asked alone with the highest limit, so nothing can be cut by other domains;
 * a domain over 1,000 is still cut by the limit (everyContactOfDomain splits such an answer).
 */
export async function contactsOfDomain(base: string, key: string, domain: string, seniority?: string): Promise<any[]> {
  const { status, text, body } = await call(base, `/api/v1/contacts?${qs({ domain, limit: 1000, seniority })}`, {
    key,
  });
  if (status !== 200) throw new Error(`contacts answered ${status}: ${text}`);
  return body.data;
}

/** GET /_sandbox/stats: requests by endpoint, units by plan, faults by kind. */
export async function sandboxStats(base: string): Promise<any> {
  return (await call(base, '/_sandbox/stats')).body;
}

const SENIORITY_ORDER = ['cxo', 'vp', 'director', 'manager', 'staff'];

/**
 * Every contact of one domain the service will give: one call at the highest limit, and if that
 * comes back full, one call per seniority (most senior first). `cut` names the seniorities that
 * fill even a call of their own, so more exist than any call returns.
 */
export async function everyContactOfDomain(
  base: string,
  key: string,
  domain: string,
): Promise<{ contacts: any[]; cut: string[] }> {
  const whole = await contactsOfDomain(base, key, domain);
  if (whole.length < 1000) return { contacts: whole, cut: [] };
  const contacts: any[] = [];
  const cut: string[] = [];
  for (const seniority of SENIORITY_ORDER) {
    const some = await contactsOfDomain(base, key, domain, seniority);
    contacts.push(...some);
    if (some.length >= 1000) cut.push(seniority);
  }
  return { contacts, cut };
}

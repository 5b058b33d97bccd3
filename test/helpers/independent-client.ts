import { request } from 'undici';

/**
 * A deliberately plain client, written apart from src/api: it pages with undici.request and
 * JSON.parse only, so tests compare prospect's output against something it did not produce.
 */
export async function getJson(url: string, key: string): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const response = await request(url, { headers: { authorization: `Bearer ${key}` } });
  const text = await response.body.text();
  return { status: response.statusCode, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

export async function allCompanies(base: string, key: string, params: Record<string, string>): Promise<any[]> {
  const rows: any[] = [];
  let cursor: string | null | undefined;
  do {
    const query = new URLSearchParams({ ...params, limit: '1000', ...(cursor ? { cursor } : {}) });
    const { status, body } = await getJson(`${base}/api/v1/companies?${query}`, key);
    if (status !== 200) throw new Error(`companies answered ${status}: ${JSON.stringify(body)}`);
    rows.push(...body.data);
    cursor = body.next_cursor;
  } while (cursor);
  return rows;
}

/** Every contact of one domain, asked alone with the highest limit, so nothing can be cut by other domains. */
export async function contactsOfDomain(base: string, key: string, domain: string, seniority?: string): Promise<any[]> {
  const query = new URLSearchParams({ domain, limit: '1000', ...(seniority ? { seniority } : {}) });
  const { status, body } = await getJson(`${base}/api/v1/contacts?${query}`, key);
  if (status !== 200) throw new Error(`contacts answered ${status}: ${JSON.stringify(body)}`);
  return body.data;
}

export async function sandboxStats(base: string): Promise<any> {
  return (await getJson(`${base}/_sandbox/stats`, '')).body;
}

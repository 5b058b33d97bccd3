/**
 * A second crawl in front of a sandbox: it forwards every request, and while `nextMonth` is on it
 * changes the stacks of the companies pages it answers, by a hash of each domain, as a month of
 * adoption and churn would: a share drops Klaviyo, a share adopts it, a share adopts Zendesk, a share
 * drops a technology. The service's counts stay those of the first technology, which no change touches.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { csvRecords } from './csv.js';
import { allCompanies } from './independent-client.js';
import { asOfDay, SANDBOX_KEYS, startTestSandbox, type TestSandbox } from './sandbox.js';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding']);

/** Technologies no change touches (the listing's first filter). */
const KEPT = new Set(['Shopify']);

export interface CrawlStub {
  url: string;
  /** Serve the changed crawl (true) or the sandbox's own (false). */
  nextMonth: boolean;
  /** Companies pages answered so far. */
  pages: number;
  /** Leave every companies request after this many pages unanswered (a run to be killed mid-walk). */
  holdAfter: number;
  close(): Promise<void>;
}

interface Entry {
  t: string;
  c: string;
  v?: unknown;
}

/** A row's stack in the changed crawl. */
export function nextMonthStack(domain: string, technologies: Entry[]): Entry[] {
  const bucket = createHash('sha256').update(domain).digest()[0]! % 20;
  const has = (name: string) => technologies.some((entry) => entry.t === name);
  if (bucket === 0) return technologies.filter((entry) => entry.t !== 'Klaviyo');
  if (bucket === 1 && !has('Klaviyo')) return [...technologies, { t: 'Klaviyo', c: 'Email', v: null }];
  if (bucket === 2 && !has('Zendesk')) return [...technologies, { t: 'Zendesk', c: 'Live chat', v: null }];
  if (bucket === 3) {
    const dropped = technologies.findLast((entry) => !KEPT.has(entry.t) && entry.t !== 'Klaviyo');
    return technologies.filter((entry) => entry !== dropped);
  }
  return technologies;
}

export async function startCrawlStub(upstream: string): Promise<CrawlStub> {
  const stub: CrawlStub = { url: '', nextMonth: false, pages: 0, holdAfter: Infinity, close: async () => {} };
  const held: ServerResponse[] = [];

  async function forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const isPage = request.url?.startsWith('/api/v1/companies') ?? false;
    if (isPage && stub.pages >= stub.holdAfter) {
      held.push(response);
      return;
    }
    if (isPage) stub.pages += 1;
    const answer = await fetch(new URL(request.url ?? '/', upstream), {
      headers: { authorization: request.headers.authorization ?? '' },
    });
    let body = Buffer.from(await answer.arrayBuffer());
    if (stub.nextMonth && answer.ok && isPage) {
      const page = JSON.parse(body.toString('utf8')) as { data: Array<{ domain: string; technologies: Entry[] }> };
      for (const row of page.data) {
        row.technologies = nextMonthStack(row.domain, row.technologies);
        (row as { tech_count?: number }).tech_count = row.technologies.length;
      }
      body = Buffer.from(JSON.stringify(page));
    }
    const headers = Object.fromEntries([...answer.headers].filter(([name]) => !HOP_BY_HOP.has(name)));
    response.writeHead(answer.status, headers).end(body);
  }

  const server = createServer((request, response) => {
    forward(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stub.close = async () => {
    for (const response of held.splice(0)) response.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return stub;
}

/** A row of a diff as an independent reader computes it from two listings. */
export interface ExpectedChange {
  domain: string;
  change: 'new' | 'changed' | 'gone';
  added: string[];
  removed: string[];
}

/** The diff of two listings (rows with `domain` and `technologies`), computed here from the rows alone. */
export function diffListings(before: any[], after: any[]): ExpectedChange[] {
  const names = (row: any) => new Set<string>(row.technologies.map((entry: Entry) => entry.t));
  const earlier = new Map(before.map((row) => [row.domain as string, names(row)]));
  const later = new Set(after.map((row) => row.domain as string));
  const changes: ExpectedChange[] = [];
  for (const row of after) {
    const was = earlier.get(row.domain);
    const now = names(row);
    if (was === undefined) changes.push({ domain: row.domain, change: 'new', added: [], removed: [] });
    else {
      const added = [...now].filter((name) => !was.has(name)).sort();
      const removed = [...was].filter((name) => !now.has(name)).sort();
      if (added.length + removed.length > 0) changes.push({ domain: row.domain, change: 'changed', added, removed });
    }
  }
  for (const row of before)
    if (!later.has(row.domain)) changes.push({ domain: row.domain, change: 'gone', added: [], removed: [] });
  return changes;
}

/** In domain order, as the tests compare changes. */
export const byDomain = (a: { domain: string }, b: { domain: string }): number => (a.domain < b.domain ? -1 : 1);

/** The rows of a --changes CSV as the independent diff names them, in domain order. */
export function changesInCsv(csv: string): ExpectedChange[] {
  return csvRecords(csv)
    .map((row) => ({
      domain: row.domain!,
      change: row.change as ExpectedChange['change'],
      added: row.technologies_added ? row.technologies_added.split(';') : [],
      removed: row.technologies_removed ? row.technologies_removed.split(';') : [],
    }))
    .sort(byDomain);
}

/** The sandbox's October and November crawls of one dataset, and what an independent client lists of them. */
export interface MonthlyCrawls {
  october: TestSandbox;
  /** November's, with its traffic recorded (what a run asked for). */
  november: TestSandbox;
  /** October's `-t Shopify` listing. */
  before: any[];
  /** The diff of the two `-t Shopify` listings, in domain order. */
  expected: ExpectedChange[];
  close(): Promise<void>;
}

/** The same seed's crawls of 2026-10-15 and 2026-11-15, as issue 45's cases compare them. */
export async function startMonthlyCrawls(data = { seed: 7, companies: 20_000 }): Promise<MonthlyCrawls> {
  const [october, november] = await Promise.all([
    startTestSandbox({ ...data, ...asOfDay('2026-10-15') }),
    startTestSandbox({ ...data, ...asOfDay('2026-11-15'), recordTraffic: true }),
  ]);
  const key = SANDBOX_KEYS.growth;
  const before = await allCompanies(october.url, key, { technology: 'Shopify' });
  const after = await allCompanies(november.url, key, { technology: 'Shopify' });
  return {
    october,
    november,
    before,
    expected: diffListings(before, after).sort(byDomain),
    close: async () => {
      await Promise.all([october.close(), november.close()]);
    },
  };
}

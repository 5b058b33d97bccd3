/**
 * The walk of a filter set, split into parts (companies/split.ts) or not: against the in-process
 * sandbox (the service as the contract has it) and against a small scripted service that can
 * misbehave (ignore repeated technologies, echo what it did not apply, hold pages forever).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type CompanyQuery, type CompanyRow, type ProspectClient } from '../../../src/api/index.js';
import type { SplitOptions } from '../../../src/core/companies/split.js';
import { walkCompanies, type CompanyWalk } from '../../../src/core/companies/walk.js';
import type { MergedChunk } from '../../../src/core/companies/merge.js';
import { allCompanies, call, sandboxStats } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.js';
import {
  clientOf,
  closeScripted,
  sampleCompany,
  serveScript,
  type RecordedRequest,
  type ScriptedResponse,
} from '../../helpers/scripted-server.js';

const KEY = SANDBOX_KEYS.growth;
/** Small pages on a small sandbox, so that sets of 500 to 600 companies are listings of several pages, and parts of two. */
const PAGE = 50;
const COMPANIES_IN_SANDBOX = 20_000;

async function chunksOf(walk: CompanyWalk): Promise<Array<MergedChunk<CompanyRow>>> {
  const chunks: Array<MergedChunk<CompanyRow>> = [];
  for await (const chunk of walk.chunks) chunks.push(chunk);
  return chunks;
}

const rowsOf = (chunks: Array<MergedChunk<CompanyRow>>) => chunks.flatMap((chunk) => chunk.rows);

/** What the walk said about splitting, and whether as a fallback. */
function splitBy(
  concurrency: number,
  extra: Partial<SplitOptions> = {},
): SplitOptions & { said: Array<[string, boolean]> } {
  const said: Array<[string, boolean]> = [];
  return { concurrency, avoid: [], explain: (line, fallback) => said.push([line, fallback]), said, ...extra };
}

/** The query as the sandbox's parameters, for the independent client. */
function params(query: CompanyQuery): Array<[string, string]> {
  const pairs: Array<[string, string | undefined]> = [
    ['technology', query.technology],
    ...(query.moreTechnologies ?? []).map((name): [string, string] => ['technology', name]),
    ['not_technology', query.notTechnology],
    ...(query.moreNotTechnologies ?? []).map((name): [string, string] => ['not_technology', name]),
    ['employee_range', query.employeeRange],
    ['country', query.country],
  ];
  return pairs.filter((pair): pair is [string, string] => pair[1] !== undefined);
}

describe('a split walk against the sandbox', () => {
  let sandbox: TestSandbox;
  let client: ProspectClient;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ companies: COMPANIES_IN_SANDBOX });
    client = createClient({ baseUrl: sandbox.url, apiKey: KEY, pageSize: PAGE });
  });
  afterAll(async () => {
    await client.close();
    await sandbox.close();
  });

  const sets: CompanyQuery[] = [
    { technology: 'Shopify', notTechnology: 'Klaviyo' },
    { technology: 'react', employeeRange: '11-500' },
    { technology: 'WordPress', country: 'united states' },
  ];

  it.each(sets)('lists every company of one cursor once, in its order, with its meta (%o)', async (query) => {
    const expected = await allCompanies(sandbox.url, KEY, { ...Object.fromEntries(params(query)), limit: PAGE });
    expect(expected.length).toBeGreaterThan(4 * PAGE);
    const before = await sandboxStats(sandbox.url);
    const split = splitBy(8, { avoid: [query.technology] });
    const walk = walkCompanies(client, [query], { readAhead: true, split });
    const rows = rowsOf(await chunksOf(walk));
    const calls = (await sandboxStats(sandbox.url)).requests.companies - before.requests.companies;
    expect(rows).toEqual(expected);
    expect(walk.partition?.queries).toHaveLength(8);
    expect(split.said).toEqual([[expect.stringMatching(/as 8 parts at once/), false]]);
    // The set's own first page, then every part's pages and nothing more.
    const partTotals = await Promise.all(
      walk.partition!.queries.map(
        async (part) =>
          (
            await call(sandbox.url, `/api/v1/companies?${new URLSearchParams([...params(part), ['limit', '1']])}`, {
              key: KEY,
            })
          ).body.meta?.total ?? 0,
      ),
    );
    expect(partTotals.reduce((sum, total) => sum + total, 0)).toBe(expected.length);
    expect(calls).toBe(1 + partTotals.reduce((sum, total) => sum + Math.max(1, Math.ceil(total / PAGE)), 0));
    // The set's meta, never a part's: a document ends as the single cursor's does.
    const single = await call(
      sandbox.url,
      `/api/v1/companies?${new URLSearchParams([...params(query), ['limit', '1']])}`,
      { key: KEY },
    );
    expect(walk.answers).toEqual([{ kind: 'meta', meta: single.body.meta }]);
  });

  it('as many parts as --concurrency allows, and one cursor at --concurrency 1', async () => {
    const query = sets[0]!;
    const expected = await allCompanies(sandbox.url, KEY, { ...Object.fromEntries(params(query)), limit: PAGE });
    for (const [concurrency, parts] of [[2, 2]] as const) {
      const walk = walkCompanies(client, [query], { readAhead: true, split: splitBy(concurrency) });
      expect(rowsOf(await chunksOf(walk))).toEqual(expected);
      expect(walk.partition?.queries).toHaveLength(parts);
    }
    const one = walkCompanies(client, [query], { readAhead: true, split: splitBy(1) });
    expect(rowsOf(await chunksOf(one))).toEqual(expected);
    expect(one.partition).toBeUndefined();
  });

  it("resumes from any chunk's positions with its partition, with exactly the rows that follow", async () => {
    const query = sets[1]!;
    const walk = walkCompanies(client, [query], { readAhead: true, split: splitBy(4) });
    const chunks = await chunksOf(walk);
    const whole = rowsOf(chunks);
    const partition = walk.partition!;
    // A merged chunk is never longer than a page: a checkpoint a page apart, as with one cursor.
    expect(Math.max(...chunks.map((chunk) => chunk.rows.length))).toBeLessThanOrEqual(PAGE);
    for (const at of [0, Math.floor(chunks.length / 2), chunks.length - 2]) {
      const done = chunks.slice(0, at + 1).flatMap((chunk) => chunk.rows).length;
      const resumed = walkCompanies(client, [query], { positions: chunks[at]!.positions, partition });
      const rest = rowsOf(await chunksOf(resumed));
      expect([...whole.slice(0, done), ...rest]).toEqual(whole);
      expect(resumed.answers[0]).toMatchObject({ kind: 'meta', meta: { total: whole.length } });
    }
  });

  it('does not split a listing of 4 pages or fewer, nor one --max keeps within 4 pages', async () => {
    const small = { technology: 'Shopify', employeeRange: '11-50' };
    const expected = await allCompanies(sandbox.url, KEY, { ...Object.fromEntries(params(small)), limit: PAGE });
    expect(expected.length).toBeLessThanOrEqual(4 * PAGE);
    const before = await sandboxStats(sandbox.url);
    const walk = walkCompanies(client, [small], { readAhead: true, split: splitBy(8) });
    expect(rowsOf(await chunksOf(walk))).toEqual(expected);
    expect(walk.partition).toBeUndefined();
    // The first page is the one cursor's: nothing asked twice.
    expect((await sandboxStats(sandbox.url)).requests.companies - before.requests.companies).toBe(
      Math.ceil(expected.length / PAGE),
    );
    const capped = walkCompanies(client, [sets[0]!], { split: splitBy(8, { max: 4 * PAGE }) });
    await chunksOf(capped);
    expect(capped.partition).toBeUndefined();
  });

  it('stops every part at once when the run stops (--max): no part asks for a page afterwards', async () => {
    const walk = walkCompanies(client, [sets[2]!], { readAhead: true, split: splitBy(8, { max: 5 * PAGE }) });
    let rows = 0;
    for await (const chunk of walk.chunks) {
      rows += chunk.rows.length;
      if (rows >= 5 * PAGE) break;
    }
    expect(walk.partition?.queries).toHaveLength(8);
    const atStop = (await sandboxStats(sandbox.url)).requests.companies;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await sandboxStats(sandbox.url)).requests.companies).toBe(atStop);
  });
});

// ---------------------------------------------------------------------------------------------
// A small service that answers from a script, and can misbehave

type Behaviour = 'faithful' | 'ignores repeated technologies' | 'echoes what it did not apply';

/** 400 companies by rank, all running Base; A, B, C and D each in some, so any of them splits the set. */
const COMPANIES = Array.from({ length: 400 }, (_, i) => {
  const stack = [
    'Base',
    ...(i % 2 === 0 ? ['A'] : []),
    ...(i % 3 === 0 ? ['B'] : []),
    ...(i % 5 < 2 ? ['C'] : []),
    ...(i % 7 < 3 ? ['D'] : []),
  ];
  return sampleCompany(`c${String(i).padStart(3, '0')}.com`, {
    crux_rank: i + 1,
    tech_count: stack.length,
    technologies: stack.map((t) => ({ t, c: 'x', v: null })),
  });
});

/** The companies that run all of `allOf` and none of `noneOf`. */
function matching(allOf: readonly string[], noneOf: readonly string[]) {
  const runs = (company: (typeof COMPANIES)[number], name: string) =>
    (company['technologies'] as Array<{ t: string }>).some((entry) => entry.t.toLowerCase() === name.toLowerCase());
  return COMPANIES.filter(
    (company) => allOf.every((name) => runs(company, name)) && !noneOf.some((name) => runs(company, name)),
  );
}

function scriptedService(behaviour: Behaviour, hold?: (request: RecordedRequest) => boolean) {
  return (request: RecordedRequest): ScriptedResponse => {
    if (hold?.(request)) return { neverRespond: true };
    const sent = { all_of: request.query.getAll('technology'), none_of: request.query.getAll('not_technology') };
    const applied =
      behaviour === 'faithful' ? sent : { all_of: sent.all_of.slice(0, 1), none_of: sent.none_of.slice(0, 1) };
    const set = matching(applied.all_of, applied.none_of);
    if (set.length === 0) return { status: 422, body: { error: { code: 'no_match', reason: 'No company matches.' } } };
    const from = Number(request.query.get('cursor') ?? 0);
    const limit = Number(request.query.get('limit'));
    const echo = behaviour !== 'ignores repeated technologies' && (sent.all_of.length > 1 || sent.none_of.length > 1);
    return {
      body: {
        data: set.slice(from, from + limit),
        meta: {
          source: { dataset: 'd', method: 'm', publisher: 'p', history_since: '2019' },
          field_fill_rates: {},
          scope: 's',
          total: set.length,
          ...(echo ? { technologies: sent } : {}),
        },
        next_cursor: from + limit < set.length ? String(from + limit) : null,
      },
    };
  };
}

describe('a split walk against a service that does not apply what it is sent', () => {
  afterEach(closeScripted);
  const everyCompany = COMPANIES.map((company) => company['domain']);

  it('splits against a service that does', async () => {
    const server = await serveScript(scriptedService('faithful'));
    const walk = walkCompanies(clientOf(server, { apiKey: KEY, pageSize: 20 }), [{ technology: 'Base' }], {
      readAhead: true,
      split: splitBy(8),
    });
    expect(rowsOf(await chunksOf(walk)).map((row) => row.domain)).toEqual(everyCompany);
    expect(walk.partition?.queries).toHaveLength(8);
  });

  it.each([
    ['ignores repeated technologies', /did not say it applied every technology of part 1 of 8/],
    ['echoes what it did not apply', /its 8 parts count [\d,]+ companies, not the set's 400/],
  ] as const)(
    "walks one cursor when the service %s, from the set's first page, and says why",
    async (behaviour, why) => {
      const server = await serveScript(scriptedService(behaviour));
      const split = splitBy(8);
      const walk = walkCompanies(clientOf(server, { apiKey: KEY, pageSize: 20 }), [{ technology: 'Base' }], {
        readAhead: true,
        split,
      });
      expect(rowsOf(await chunksOf(walk)).map((row) => row.domain)).toEqual(everyCompany);
      expect(walk.partition).toBeUndefined();
      expect(split.said).toEqual([[expect.stringMatching(why), true]]);
      // What the failed split cost: the parts' first pages. The set's first page is asked once and
      // is the one cursor's first page; its other 19 pages follow.
      const whole = server.requests.filter(
        (request) => request.query.getAll('technology').length === 1 && !request.query.has('not_technology'),
      );
      const parts = server.requests.filter((request) => !whole.includes(request));
      expect(whole.map((request) => request.query.get('cursor'))).toEqual([
        null,
        ...Array.from({ length: 19 }, (_, i) => String(20 * (i + 1))),
      ]);
      expect(parts).toHaveLength(8);
      expect(parts.every((request) => !request.query.has('cursor'))).toBe(true);
    },
  );

  it("closing the walk withdraws every part's page in flight, even one the service never answers", async () => {
    const server = await serveScript(scriptedService('faithful', (request) => request.query.has('cursor')));
    const walk = walkCompanies(
      clientOf(server, { apiKey: KEY, pageSize: 10, timeoutMs: 600_000 }),
      [{ technology: 'Base' }],
      { readAhead: true, split: splitBy(8) },
    );
    const first = await walk.chunks.next();
    expect(first.done).toBe(false);
    expect(walk.partition?.queries).toHaveLength(8);
    // Every part longer than a page has asked for its second page at once, and none will ever come.
    const longer = walk.partition!.queries.filter(
      (part) =>
        matching(
          [part.technology, ...(part.moreTechnologies ?? [])],
          params(part)
            .filter(([name]) => name === 'not_technology')
            .map(([, name]) => name),
        ).length > 10,
    );
    expect(longer.length).toBeGreaterThan(0);
    while (server.requests.filter((request) => request.query.has('cursor')).length < longer.length)
      await new Promise((resolve) => setTimeout(resolve, 5));
    await walk.chunks.return(undefined);
  });
});

/** The companies a pipeline lists: every company excluded by --exclude-domains is counted once, wherever it sits. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../../src/api/index.js';
import { companyFiltersSchema } from '../../../src/core/companies/filters.js';
import { newCheckpoint } from '../../../src/core/pipeline/state/checkpoint.js';
import { companiesStillToDo } from '../../../src/core/pipeline/listing.js';
import { allCompanies } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

let sandbox: RunningSandbox;
let domains: string[];
beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 3_000 });
  domains = (await allCompanies(sandbox.url, SANDBOX_KEYS.growth, { technology: 'jQuery' })).map((row) => row.domain);
});
afterAll(() => sandbox.close());

async function listExcluding(excluded: Set<string>) {
  const client = createClient({ baseUrl: sandbox.url, apiKey: SANDBOX_KEYS.growth, pageSize: 100 });
  const filters = companyFiltersSchema.parse({ technology: ['jQuery'], notTechnology: [] });
  let afterLast = 0;
  const listed: string[] = [];
  let carried = 0;
  const limits = {
    accept: (row: { domain: string }) => !excluded.has(row.domain),
    excludedAfterLast: (count: number) => (afterLast += count),
  };
  for await (const item of companiesStillToDo(client, filters, newCheckpoint('test', new Date()), limits)) {
    listed.push(item.company.domain);
    carried += item.excluded ?? 0;
  }
  return { listed, carried, afterLast };
}

describe('companiesStillToDo with excluded domains', () => {
  it('counts the companies excluded on the last pages, which no listed company follows', async () => {
    expect(domains.length).toBeGreaterThan(300);
    const tail = new Set(domains.slice(-250));
    const { listed, carried, afterLast } = await listExcluding(tail);
    expect(listed).toEqual(domains.slice(0, -250));
    expect(carried + afterLast).toBe(250);
    expect(afterLast).toBeGreaterThan(0);
  });

  it('counts every company when all of them are excluded', async () => {
    const { listed, carried, afterLast } = await listExcluding(new Set(domains));
    expect(listed).toEqual([]);
    expect(carried).toBe(0);
    expect(afterLast).toBe(domains.length);
  });

  it('counts companies excluded in the middle once, on the next company listed', async () => {
    const middle = new Set(domains.slice(100, 350));
    const { listed, carried, afterLast } = await listExcluding(middle);
    expect(listed.length).toBe(domains.length - 250);
    expect(carried).toBe(250);
    expect(afterLast).toBe(0);
  });
});

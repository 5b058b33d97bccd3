import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type CompanyRow, type ProspectClient } from '../../../src/api/index.js';
import { planSetWalk } from '../../../src/core/count/set-size.js';
import { allCompanies } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;

describe('a walk of the set (count --by industry, technology, category)', () => {
  let sandbox: TestSandbox;
  let client: ProspectClient;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ companies: 10_000 });
    client = createClient({ baseUrl: sandbox.url, apiKey: KEY, pageSize: 100 });
  });
  afterAll(async () => {
    await client.close();
    await sandbox.close();
  });

  it('is split into parts like an export, and counts every company of the set once', async () => {
    const filters = {
      technologies: ['Shopify', 'Klaviyo'],
      notTechnologies: [],
      employeeRanges: [],
      countries: [],
      industries: [],
      maxRank: undefined,
    };
    const said: string[] = [];
    const walk = await planSetWalk(client, filters, 100, 4, undefined, {
      concurrency: 4,
      avoid: filters.technologies,
      explain: (line) => said.push(line),
    });
    const rows: CompanyRow[] = [];
    const size = await walk.run(
      (row) => rows.push(row),
      () => {},
    );
    // Klaviyo is checked on each row: the service's set is Shopify's.
    const expected = (await allCompanies(sandbox.url, KEY, { technology: 'Shopify', limit: 1000 })).filter((row) =>
      row.technologies.some((entry: { t: string }) => entry.t === 'Klaviyo'),
    );
    expect(rows.map((row) => row.domain)).toEqual(expected.map((row) => row.domain));
    expect(size.companies).toBe(expected.length);
    expect(said).toEqual([expect.stringMatching(/as 4 parts at once \(with and without .*\)/)]);
    expect(said[0]).not.toMatch(/Klaviyo|Shopify/);
  });
});

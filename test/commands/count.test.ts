/**
 * `prospect count` and `pipeline --dry-run` as a user runs them, against one small sandbox; every
 * expected number comes from the independent client (a walk of the set and each domain's contacts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess } from '../helpers/cli.js';
import { allCompanies, call, everyContactOfDomain, sandboxStats } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { closeScripted, serveScript, type RecordedRequest } from '../helpers/scripted-server.js';

let sandbox: TestSandbox;
const key = SANDBOX_KEYS.growth;

beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 5_000 });
});
afterAll(async () => {
  await sandbox?.close();
  await closeScripted();
});

/** The same main() in process: for the counts and their layout, once a count has been spawned (the first walk below). */
const countInProcess = (args: string[], apiKey = key) => runInProcess(['count', ...args], { url: sandbox.url, apiKey });

interface SetSpec {
  args: string[];
  /** The first technology and the service filters; the other technologies are checked here on each stack. */
  queries: Array<Record<string, string>>;
  all: string[];
  none: string[];
}

/**
 * The independent client's answers, asked once each: the sandbox's data does not change, and the
 * sets below share their listings and most of their domains.
 */
const listings = new Map<string, ReturnType<typeof allCompanies>>();
const listing = (query: Record<string, string>) => {
  const name = JSON.stringify(query);
  if (!listings.has(name)) listings.set(name, allCompanies(sandbox.url, key, query));
  return listings.get(name)!;
};
const contactCounts = new Map<string, Promise<number>>();
/**
 * A call holds at most 1,000 contacts and the service never pages them, so a full answer is split by
 * seniority; a seniority that fills a call of its own cannot be counted here, and fails the test saying so.
 */
const contactsOf = (domain: string) => {
  if (!contactCounts.has(domain))
    contactCounts.set(
      domain,
      everyContactOfDomain(sandbox.url, key, domain).then(({ contacts, cut }) => {
        if (cut.length > 0)
          throw new Error(
            `${domain} has more ${cut.join(' and ')} contacts than one call returns: no independent count of this set`,
          );
        return contacts.length;
      }),
    );
  return contactCounts.get(domain)!;
};

/** The set walked by hand: each query's companies, the other technologies checked on the stack, each domain's contacts asked alone. */
async function independentCount(spec: SetSpec): Promise<{ companies: number; contacts: number }> {
  const domains = new Set<string>();
  for (const query of spec.queries) {
    for (const row of await listing(query)) {
      const stack = new Set(row.technologies.map((entry: { t: string }) => entry.t.toLowerCase()));
      if (spec.all.every((name) => stack.has(name)) && !spec.none.some((name) => stack.has(name)))
        domains.add(row.domain);
    }
  }
  let contacts = 0;
  for (const domain of domains) contacts += await contactsOf(domain);
  return { companies: domains.size, contacts };
}

describe('prospect count', () => {
  const sets: SetSpec[] = [
    { args: ['-t', 'Shopify'], queries: [{ technology: 'Shopify' }], all: [], none: [] },
    { args: ['-t', 'Shopify', '-t', 'Klaviyo'], queries: [{ technology: 'Shopify' }], all: ['klaviyo'], none: [] },
    {
      args: ['-t', 'WordPress', '-T', 'WooCommerce', '-T', 'Elementor'],
      queries: [{ technology: 'WordPress' }],
      all: [],
      none: ['woocommerce', 'elementor'],
    },
    {
      args: ['-t', 'WordPress', '--country', 'US', '--country', 'germany'],
      queries: [
        { technology: 'WordPress', country: 'united states' },
        { technology: 'WordPress', country: 'germany' },
      ],
      all: [],
      none: [],
    },
    {
      args: ['-t', 'jQuery', '-t', 'WordPress', '-T', 'Elementor', '--employee-range', '1-10,51-200'],
      queries: [
        { technology: 'jQuery', employee_range: '1-10' },
        { technology: 'jQuery', employee_range: '51-200' },
      ],
      all: ['wordpress'],
      none: ['elementor'],
    },
  ];

  // The first set spawned, the others in process (the same main()): the walks are what this table adds.
  it.each(sets)('agrees with an independent walk: $args', async (spec) => {
    const args = ['count', ...spec.args, '--format', 'json'];
    const run =
      spec === sets[0]
        ? await runCli(args, { url: sandbox.url, apiKey: key })
        : await runInProcess(args, { url: sandbox.url, apiKey: key });
    expect(run.code, run.stderr).toBe(0);
    const document = JSON.parse(run.stdout);
    const expected = await independentCount(spec);
    expect(expected.companies).toBeGreaterThan(0);
    expect(document.data).toEqual([{ companies: expected.companies, contacts: expected.contacts }]);
    expect(document.meta.exact).toEqual({ companies: true, contacts: true });
    expect(document.meta.counted_by).toBe('service');
  });

  it('prints the counts as CSV in a pipe, and a Free key gets contacts too', async () => {
    // In process: stdout and stderr are pipes there too, and the first walk above spawned a count.
    const growth = await countInProcess(['-t', 'Shopify', '-t', 'Klaviyo', '--verbose']);
    const free = await countInProcess(['-t', 'Shopify', '-t', 'Klaviyo'], SANDBOX_KEYS.free);
    expect(free.code, free.stderr).toBe(0);
    const expected = await independentCount(sets[1]!);
    expect(free.stdout).toBe(`companies,contacts\n${expected.companies},${expected.contacts}\n`);
    expect(growth.stdout).toBe(free.stdout);
    // With --verbose a pipe gets the notes too: how it was counted is a line of its own, after the provenance.
    expect(growth.stderr.split('\n')).toContain('Counted by the service.');
  });

  it('--by country: one call per country the service lists, shares of the set, CSV in a pipe', async () => {
    const countries: string[] = (await call(sandbox.url, '/api/v1/countries', { key })).body.data;
    const before = await sandboxStats(sandbox.url);
    const run = await countInProcess(['-t', 'WordPress', '--by', 'country', '--top', '0']);
    const after = await sandboxStats(sandbox.url);
    expect(run.code, run.stderr).toBe(0);
    expect(after.requests.companies - before.requests.companies).toBe(countries.length);
    expect(after.requests.countries - before.requests.countries).toBe(1);
    const rows = await listing({ technology: 'WordPress' });
    const byCountry = new Map<string, number>();
    for (const row of rows) byCountry.set(row.country, (byCountry.get(row.country) ?? 0) + 1);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toBe('country,companies,contacts,share');
    const parsed = lines.slice(1).map((line) => line.split(','));
    expect(new Map(parsed.map(([country, companies]) => [country!, Number(companies)]))).toEqual(byCountry);
    const companies = parsed.map((fields) => Number(fields[1]));
    expect(companies).toEqual([...companies].sort((a, b) => b - a));
    for (const fields of parsed) expect(Number(fields[3])).toBeCloseTo(Number(fields[1]) / rows.length, 3);
  });

  it('a count that fails writes nothing and never calls its output cut short (issue 43)', async () => {
    for (const args of [
      ['-t', 'Shopfy'],
      ['-t', 'Shopfy', '--by', 'country'],
    ]) {
      const run = await countInProcess(args);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain('Did you mean: Shopify');
      expect(run.stderr).not.toMatch(/incomplete/);
    }
  });

  it('--by industry walks the set, --top 3 adds an "other" row, and labels contacts as not available (CSV and meta)', async () => {
    const [csv, json] = await Promise.all([
      countInProcess(['-t', 'Shopify', '--by', 'industry', '--top', '3']),
      countInProcess(['-t', 'Shopify', '--by', 'industry', '--top', '3', '--format', 'json', '--verbose']),
    ]);
    expect(json.code, json.stderr).toBe(0);
    const document = JSON.parse(json.stdout);
    const rows = await listing({ technology: 'Shopify' });
    const byIndustry = new Map<string, number>();
    for (const row of rows) byIndustry.set(row.industry, (byIndustry.get(row.industry) ?? 0) + 1);
    const top = [...byIndustry.entries()].sort((a, b) => b[1] - a[1]);
    const counts = [...top.slice(0, 3).map(([, n]) => n), top.slice(3).reduce((sum, [, n]) => sum + n, 0)];
    expect(document.data.map((row: { companies: number }) => row.companies)).toEqual(counts);
    expect(document.data.at(-1)).toMatchObject({ industry: 'other', contacts: null, other: true });
    expect(document.meta).toMatchObject({
      counted_by: 'walk',
      exact: { companies: true, contacts: false },
      segment_contacts: { available: false },
    });
    expect(document.meta.segment_contacts.reason).toContain('cannot filter companies by industry');
    expect(json.stderr).toContain('warning: contacts per industry are not available');
    expect(json.stderr.split('\n')).toContain('Counted by walking the set.');
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout.trim().split('\n').slice(1)).toEqual(
      document.data.map(
        (row: { industry: string; companies: number }) =>
          `${row.industry},${row.companies},n/a,${Math.round((row.companies / rows.length) * 10_000) / 10_000}`,
      ),
    );
  });

  it('--by technology counts the contacts of the technologies shown with the service, one query each', async () => {
    const before = await sandboxStats(sandbox.url);
    const run = await countInProcess(['-t', 'Shopify', '--by', 'technology', '--top', '3', '--format', 'json']);
    const after = await sandboxStats(sandbox.url);
    expect(run.code, run.stderr).toBe(0);
    const document = JSON.parse(run.stdout);
    const shown = document.data.filter((row: { other?: boolean }) => !row.other);
    expect(shown).toHaveLength(3);
    // The set walked (one page of 1,000), then one count per technology shown, then nothing else.
    expect(after.requests.companies - before.requests.companies).toBe(1 + 1 + 3);
    for (const row of shown) {
      const counted = await call(
        sandbox.url,
        `/api/v1/companies?${new URLSearchParams([
          ['technology', 'Shopify'],
          ['technology', row.technology],
          ['limit', '1'],
        ])}`,
        { key },
      );
      expect(row).toMatchObject({ companies: counted.body.meta.total, contacts: counted.body.meta.contact_count });
    }
    // Every Shopify store runs one of the three: no "other" row, so every contact count is the service's.
    expect(document.data).toHaveLength(3);
    expect(document.meta.segment_contacts).toEqual({ available: true, counted_by: 'service' });
  });
});

describe('count against a slow service', () => {
  it('with --latency 200, a count of one query (even of several technologies) makes exactly one request', async () => {
    const slow = await startTestSandbox({ companies: 2_000, latencyMs: 200 });
    try {
      for (const args of [
        ['-t', 'Shopify'],
        ['-t', 'Shopify', '-t', 'Cloudflare', '-T', 'Klaviyo'],
      ]) {
        const before = await sandboxStats(slow.url);
        // In process: the request count is the sandbox's, whatever runs the command.
        const run = await runInProcess(['count', ...args], { url: slow.url, apiKey: key });
        const after = await sandboxStats(slow.url);
        expect(run.code, run.stderr).toBe(0);
        expect(after.requests.total - before.requests.total).toBe(1);
      }
    } finally {
      await slow.close();
    }
  });

  it('--by country asks its countries in parallel, up to --concurrency at once', async () => {
    const countries = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const concurrency = 3;
    let inFlight = 0;
    let mostInFlight = 0;
    const arrived: string[] = [];
    // Each wave of answers is held until `concurrency` requests have arrived (or the last ones):
    // a client asking one at a time would never get its first answer.
    const waves: Array<{ release: () => void; held: Promise<void> }> = [];
    const wave = (index: number) => {
      while (waves.length <= index) {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        waves.push({ release, held });
      }
      return waves[index]!;
    };
    const server = await serveScript((request: RecordedRequest) => {
      if (request.path === '/api/v1/countries') return { body: { data: countries } };
      const country = request.query.get('country') ?? '';
      const position = arrived.push(country) - 1;
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      const group = Math.floor(position / concurrency);
      if (arrived.length === Math.min((group + 1) * concurrency, countries.length)) wave(group).release();
      const total = countries.indexOf(country) + 1;
      return {
        holdUntil: wave(group).held.then(() => (inFlight -= 1)),
        body: {
          data: [
            {
              domain: `${country}.example`,
              company_name: 'x',
              employee_range: '1-10',
              industry: 'retail',
              country,
              crux_rank: 1,
              phone: null,
              linkedin_url: null,
              tech_count: 1,
              technologies: [{ t: 'Shopify', c: 'Ecommerce', v: null }],
            },
          ],
          meta: {
            source: { dataset: 'd', method: 'm', publisher: 'p', history_since: '2020' },
            field_fill_rates: {},
            scope: 'rank',
            total,
            contact_count: total * 10,
          },
          // One row of `total`: a listing of more has a next page (a short one is a broken promise, issue 42).
          next_cursor: total > 1 ? 'more' : null,
        },
      };
    });
    // In process: the requests in flight are the server's to count.
    const run = await runInProcess(
      ['count', '-t', 'Shopify', '--by', 'country', '--top', '0', '--concurrency', String(concurrency)],
      { url: server.url, apiKey: 'secret-key-123' },
    );
    expect(run.code, run.stderr).toBe(0);
    expect([...arrived].sort()).toEqual(countries);
    expect(mostInFlight).toBe(concurrency);
    expect(run.stdout.trim().split('\n').slice(1, 3)).toEqual(['g,7,70,0.25', 'f,6,60,0.2143']);
  });
});

describe('pipeline --dry-run', () => {
  // With and without --seniority and --per-company, --stale verify and drop: each estimate against the
  // real run that follows (its written leads, and the units the sandbox counted). Its own sandbox of
  // 2,000 companies: the real runs walk the whole WordPress set (652 companies here, still
  // eight employee-range strata for the sample), and a run of the 5,000-company set costs 2.5 times as much.
  let small: TestSandbox;
  beforeAll(async () => {
    small = await startTestSandbox({ companies: 2_000 });
  });
  afterAll(async () => {
    await small?.close();
  });
  const optionSets = [
    { args: ['-t', 'WordPress', '--seniority', 'cxo', '--stale', 'verify', '--verify-budget', '100000'], paid: true },
    { args: ['-t', 'WordPress', '--per-company', '2', '--stale', 'verify', '--verify-budget', '100000'], paid: true },
    { args: ['-t', 'WordPress', '--seniority', 'director', '--per-company', '1', '--stale', 'drop'], paid: false },
  ];

  // In process, the dry runs and the real runs they are compared with: the calls and units are the
  // sandbox's to count, and the first walk above spawned this file's run of the binary.
  it.each(optionSets)(
    'spends nothing, makes only its sample calls, and estimates the real run: $args',
    async ({ args, paid }) => {
      const before = await sandboxStats(small.url);
      const dry = await runInProcess(['pipeline', ...args, '--dry-run', '--format', 'json'], {
        url: small.url,
        apiKey: key,
      });
      const middle = await sandboxStats(small.url);
      expect(dry.code, dry.stderr).toBe(0);
      expect(middle.units.growth - before.units.growth).toBe(0);
      expect(middle.requests.verify - before.requests.verify).toBe(0);
      const estimate = JSON.parse(dry.stdout);
      // Every contacts call was one of the sample's, which spans the set's employee ranges.
      expect(middle.requests.contacts - before.requests.contacts).toBe(estimate.sample.calls);
      expect(estimate.sample.strata).toBeGreaterThan(1);

      const real = await runInProcess(['pipeline', ...args, '--format', 'csv', ...(paid ? ['--yes'] : [])], {
        url: small.url,
        apiKey: key,
      });
      const after = await sandboxStats(small.url);
      expect(real.code, real.stderr).toBe(0);
      const leads = real.stdout.trim().split('\n').length - 1;
      expect(leads).toBeGreaterThan(20);
      expect(Math.abs(estimate.leads - leads) / leads).toBeLessThan(0.15);
      const units = after.units.growth - middle.units.growth;
      if (paid) {
        expect(units).toBeGreaterThan(20);
        expect(Math.abs(estimate.units - units) / units).toBeLessThan(0.25);
      } else {
        expect([estimate.units, units]).toEqual([0, 0]);
      }
    },
  );
});

describe('count --by on a 60-column terminal (issue 36; in process, stdout and stderr a terminal)', () => {
  it('labels stay distinct when cut, and the summary says how many of all the segments were shown', async () => {
    const run = await runInProcess(['count', '-t', 'Shopify', '--by', 'technology', '--top', '15'], {
      url: sandbox.url,
      apiKey: key,
      terminal: { columns: 60, rows: 40 },
      env: { TERM: 'dumb' },
    });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    const labels = lines.map((line) => line.split(/ {2,}/)[0]!);
    expect(new Set(labels).size).toBe(labels.length);
    for (const line of [...lines, ...run.stderr.trimEnd().split('\n')])
      expect([...line].length, line).toBeLessThanOrEqual(60);
    // Every segment with a company, asked independently: how many the walk found.
    const all = new Set<string>();
    for (const row of await listing({ technology: 'Shopify' }))
      for (const entry of (row['technologies'] as Array<{ t: string }> | undefined) ?? [])
        if (entry.t.toLowerCase() !== 'shopify') all.add(entry.t);
    const total = all.size.toLocaleString('en-US');
    const summary = run.stderr.replace(/\s+/g, ' ');
    expect(summary).toContain(`Wrote 15 of ${total} segments to the terminal`);
    expect(summary).toContain(`15 of ${total} segments shown`);
  });
});

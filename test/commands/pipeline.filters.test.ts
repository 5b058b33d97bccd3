/**
 * Issue 13 for `pipeline`: any-of countries walked as several service queries, merged in the service's
 * order; a resume from a checkpoint that keeps every query's position; the row count an interrupted
 * run names is the one its resume starts from. The built binary against the sandbox, for the run
 * interrupted, its resume and a refused typo; the clean reference they are compared with in process.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runCli, runInProcess, scratchDir, startCli } from '../helpers/cli.js';
import { csvRecords } from '../helpers/csv.js';
import { allCompanies, contactsOfDomain } from '../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from '../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
const COUNTRIES = ['united states', 'united kingdom', 'germany'];
// As people write them; a small page size gives the run many checkpoints to die between.
const FILTERS = [
  '--page-size',
  '20',
  'pipeline',
  '-t',
  'Shopify',
  '--country',
  'US',
  '--country',
  'UK',
  '--country',
  'Deutschland',
  '--seniority',
  'cxo,vp',
];

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ asOf: todayUtc(), latencyMs: 5 });
});
afterAll(async () => {
  await sandbox?.close();
});

const options = (extra: Parameters<typeof runCli>[1] = {}) => ({
  url: sandbox.url,
  apiKey: KEY,
  timeoutMs: 120_000,
  ...extra,
});

async function checkpointOf(state: string): Promise<any> {
  const text = await readFile(join(state, 'current', 'checkpoint.json'), 'utf8').catch(() => '');
  return text ? JSON.parse(text) : undefined;
}

/** Starts a run and sends `signal` once it has committed `pages` chunks. */
async function interruptAfter(args: string[], state: string, pages: number, signal: NodeJS.Signals, cwd: string) {
  const child = startCli(args, options({ cwd }));
  const finished = finishCli(child, options({ cwd }));
  for (let waited = 0; waited < 60_000 && child.exitCode === null; waited += 20) {
    if (((await checkpointOf(state))?.pages_done ?? 0) >= pages) break;
    await sleep(20);
  }
  child.kill(signal);
  return finished;
}

describe('pipeline with any-of countries (spawned)', () => {
  let reference: string;
  beforeAll(async () => {
    const dir = await scratchDir();
    // In process: the reference the resume must equal (the resume below is spawned).
    const clean = await runInProcess([...FILTERS, '-o', join(dir, 'leads.csv')], options({ cwd: dir }));
    expect(clean.code, clean.stderr).toBe(0);
    reference = await readFile(join(dir, 'leads.csv'), 'utf8');
  }, 120_000);

  it('walks the union of the countries in the service order, each company once', async () => {
    const union = new Map<string, any>();
    for (const country of COUNTRIES)
      for (const row of await allCompanies(sandbox.url, KEY, { technology: 'Shopify', country }))
        union.set(row.domain, row);
    const ordered = [...union.values()]
      .sort((a, b) => a.crux_rank - b.crux_rank || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0))
      .map((row) => row.domain);

    const leads = csvRecords(reference);
    const seen = [...new Set(leads.map((lead) => lead.domain!))];
    expect(seen.length).toBeGreaterThan(50);
    expect(new Set(leads.map((lead) => lead.country))).toEqual(new Set(COUNTRIES));
    // In the service's order, and each company's leads together (a company listed twice would break this).
    expect(seen).toEqual(ordered.filter((domain) => seen.includes(domain)));
    expect(leads.map((lead) => lead.domain)).toEqual(
      seen.flatMap((domain) => leads.filter((lead) => lead.domain === domain).map(() => domain)),
    );
    // The companies left out have no such contact.
    const left = ordered.filter((domain) => !seen.includes(domain)).slice(0, 8);
    expect(left.length).toBeGreaterThan(0);
    for (const domain of left) expect(await contactsOfDomain(sandbox.url, KEY, domain, 'cxo,vp'), domain).toEqual([]);
  });

  it("Ctrl-C names the committed rows its resume reports; the resume, from every query's position, is byte-identical", async () => {
    const work = await scratchDir();
    const state = join(work, 'state');
    const args = [...FILTERS, '--state', state, '-o', join(work, 'leads.csv')];
    const interrupted = await interruptAfter(args, state, 3, 'SIGINT', work);
    expect(interrupted.code, interrupted.stderr).toBe(130);
    const checkpoint = await checkpointOf(state);
    expect(checkpoint.positions).toHaveLength(COUNTRIES.length);
    const kept = /keeps ([\d,]+) committed rows?;/.exec(interrupted.stderr)?.[1];
    expect(kept, interrupted.stderr).toBeDefined();
    expect(Number(kept!.replace(/,/g, ''))).toBe(checkpoint.rows_written);
    expect(checkpoint.rows_written).toBeGreaterThan(0);

    const resumed = await runCli(['--verbose', ...args], options({ cwd: work }));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`(${kept} committed rows already written)`);
    expect(await readFile(join(work, 'leads.csv'), 'utf8')).toBe(reference);
  }, 120_000);

  it('a typo in a filter exits 2 with suggestions even with --allow-empty, and leaves no file and no checkpoint', async () => {
    const work = await scratchDir();
    // The first spawned, the others in process (the same main()).
    for (const filters of [
      ['-t', 'Shopfy'],
      ['-t', 'Shopify', '-T', 'Klaviyo', '-T', 'Atentive'],
      ['-t', 'Shopify', '--country', 'Frnace'],
    ]) {
      const args = [
        'pipeline',
        ...filters,
        '--allow-empty',
        '--state',
        join(work, 'state'),
        '-o',
        join(work, 'leads.csv'),
      ];
      const run =
        filters[1] === 'Shopfy' ? await runCli(args, options({ cwd: work })) : await runInProcess(args, options());
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toMatch(/Did you mean/);
      expect(existsSync(join(work, 'leads.csv'))).toBe(false);
      expect(existsSync(join(work, 'state', 'current', 'checkpoint.json'))).toBe(false);
    }
  });
});

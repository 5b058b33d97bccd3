/**
 * The dry run samples each stratum (an employee band) over its first pages, not only its first page:
 * a set's first rows are its largest sites, so a sample from them alone skews the estimate.
 * In process, against a sandbox: the requests are read from --debug's request log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../../helpers/cli.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 20_000 });
});
afterAll(async () => {
  await sandbox?.close();
});

describe('pipeline --dry-run samples a stratum over its first two pages', () => {
  it('a band larger than a page is read into its second page, and no band past it', async () => {
    const run = await runInProcess(['--debug', 'pipeline', '--dry-run', '-t', 'jQuery', '--format', 'json'], {
      url: sandbox.url,
      apiKey: KEY,
    });
    expect(run.code, run.stderr).toBe(0);
    // Each page of a band's listing, as the request log names it: the band, and whether a cursor was sent.
    const pages = [...run.stderr.matchAll(/GET \S+\/companies\?(\S+)/g)]
      .map(([, query]) => new URLSearchParams(query))
      .filter((query) => query.get('employee_range') !== null && query.get('limit') !== '1');
    const perBand = new Map<string, number>();
    for (const query of pages)
      perBand.set(query.get('employee_range')!, (perBand.get(query.get('employee_range')!) ?? 0) + 1);
    expect(pages.some((query) => query.has('cursor'))).toBe(true);
    expect(Math.max(...perBand.values())).toBe(2);
  });
});

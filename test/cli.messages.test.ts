/**
 * What prospect says when something is off (issue 36, its minor points): a refused key's hint names
 * where the key came from, a sandbox plan's hint is not "try --sandbox", a base URL without a scheme
 * is named as typed, a base URL with /api/v1 works from the config file too, an employee range that
 * cuts a band is refused, arguments are arguments (a file name among them is refused before any call), the local filters read as a sentence, verify keeps
 * the input's column order, and the top-level help uses --verify-budget. The first run is spawned;
 * the others run the same main() in process.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from './helpers/cli.js';
import { csvRows } from './helpers/csv.js';
import { sandboxStats } from './helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from './helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe('a refused key', () => {
  it('from PROSPECT_API_KEY: the hint says that is the rejected key (spawned)', async () => {
    const run = await runCli(['companies', '-t', 'Shopify', '--max', '1'], {
      url: sandbox.url,
      apiKey: 'sk_bad_key_0000',
    });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('The rejected key is the one in PROSPECT_API_KEY');
    expect(run.stderr).not.toMatch(/^Set PROSPECT_API_KEY/m);
  });

  it("from the config file: the hint says it is the config file's", async () => {
    const config = await scratchDir();
    const env = { PROSPECT_CONFIG_DIR: config };
    const set = await runInProcess(['config', 'set', 'api-key'], { env, input: 'sk_bad_key_0000\n' });
    expect(set.code, set.stderr).toBe(0);
    const run = await runInProcess(['companies', '-t', 'Shopify', '--max', '1'], { url: sandbox.url, env });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(
      "The rejected key is the config file's: set a valid one with `prospect config set api-key`",
    );
  });

  it('on the Free sandbox plan: the hint names a plan, not --sandbox', async () => {
    const run = await runInProcess(['--sandbox', '--sandbox-plan', 'free', 'contacts', 'meadowfitness.com']);
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('use --sandbox-plan growth');
    expect(run.stderr).not.toContain('try --sandbox');
  });
});

describe('the base URL', () => {
  it('localhost:PORT is named as typed, with the scheme it lacks', async () => {
    const run = await runInProcess(['companies', '-t', 'Shopify'], { url: 'localhost:35041', apiKey: KEY });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('the base URL "localhost:35041" has no scheme');
    expect(run.stderr).toContain('http://localhost:35041');
    expect(run.stderr).not.toContain('localhost://');
  });

  it('`config set base-url …/api/v1` is accepted, and a run with it works', async () => {
    const env = { PROSPECT_CONFIG_DIR: await scratchDir() };
    expect((await runInProcess(['config', 'set', 'base-url', `${sandbox.url}/api/v1/`], { env })).code).toBe(0);
    const run = await runInProcess(['companies', '-t', 'Shopify', '--max', '2', '--format', 'csv'], {
      apiKey: KEY,
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(csvRows(run.stdout)).toHaveLength(3);
  });
});

describe('filters and input', () => {
  it('--employee-range 5-50 is refused, naming the band it cuts and both readings', async () => {
    const run = await runInProcess(['companies', '-t', 'Shopify', '--employee-range', '5-50'], {
      url: sandbox.url,
      apiKey: KEY,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--employee-range 5-50 cuts the 1-10 band');
    expect(run.stderr).toContain('Use 1-50 (the whole band) or 11-50.');
    // Bands' own bounds stay valid.
    const whole = await runInProcess(['companies', '-t', 'Shopify', '--employee-range', '1-50', '--max', '1'], {
      url: sandbox.url,
      apiKey: KEY,
    });
    expect(whole.code, whole.stderr).toBe(0);
  });

  it('technologies checked locally read as one phrase: "runs Magento and WooCommerce"', async () => {
    const run = await runInProcess(['companies', '-t', 'Shopify', '-t', 'Magento', '-t', 'WooCommerce', '--max', '3'], {
      url: sandbox.url,
      apiKey: KEY,
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('none of which also runs Magento and WooCommerce.');
    // "Nothing was written" is true on stdout too: no CSV header from the pages that had no match.
    expect(run.stderr).toContain('Nothing was written.');
    expect(run.stdout).toBe('');
  });

  it('an invalid argument is an argument, not a line', async () => {
    const run = await runInProcess(['-v', 'contacts', 'meadowfitness.com', 'bad', '-s', 'cxo', '--format', 'csv'], {
      url: sandbox.url,
      apiKey: KEY,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('argument 2: "bad" is not a domain');
    expect(run.stderr).not.toMatch(/line 2/);
  });

  it('a file name given as an argument is refused before any call, naming the flag that reads it', async () => {
    const before = await sandboxStats(sandbox.url);
    const contacts = await runInProcess(['contacts', 'meadowfitness.com', 'accounts.csv'], {
      url: sandbox.url,
      apiKey: KEY,
    });
    expect(contacts.code).toBe(2);
    expect(contacts.stderr).toContain('argument "accounts.csv" is a file name, not a domain.');
    expect(contacts.stderr).toContain('Read the file with --domains-file accounts.csv.');
    const verify = await runInProcess(['verify', 'Leads.XLSX', '--dry-run'], { url: sandbox.url, apiKey: KEY });
    expect(verify.code).toBe(2);
    expect(verify.stderr).toContain('Read the file with --file Leads.XLSX.');
    const after = await sandboxStats(sandbox.url);
    expect(after.requests.total).toBe(before.requests.total);
  });

  it('verify --file keeps verification and verified_at where the input has them', async () => {
    const dir = await scratchDir();
    const file = join(dir, 'people.csv');
    await writeFile(file, 'name,verification,verified_at,email,title\nAna,,,ana@meadowfitness.com,CEO\n');
    const run = await runInProcess(['verify', '--file', file, '--yes', '--format', 'csv'], {
      url: sandbox.url,
      apiKey: KEY,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(csvRows(run.stdout)[0]).toEqual(['name', 'verification', 'verified_at', 'email', 'title', 'email_class']);
  });
});

it('the top-level help teaches --verify-budget, not the old --budget', async () => {
  const help = await runInProcess(['--help']);
  expect(help.stdout).toContain('--verify-budget');
  expect(help.stdout).not.toMatch(/--budget\b/);
});

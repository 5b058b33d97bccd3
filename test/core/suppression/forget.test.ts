/**
 * `prospect forget` on one machine (issue 46): the address is kept as a keyed hash in the cache
 * directory, and every later contacts, verify and pipeline run leaves it out before any call: never
 * written, never paid for (units and charged addresses counted at the sandbox), counted as suppressed.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess, scratchDir } from '../../helpers/cli.js';
import { sandboxStats } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';
import { ndjsonRecords } from '../../helpers/csv.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ recordTraffic: true });
});
afterAll(async () => {
  await sandbox?.close();
});

/** One user's machine: its cache and config directories, kept across its runs. */
async function machine() {
  const dir = await scratchDir('forget-');
  const env = { PROSPECT_CACHE_DIR: join(dir, 'cache'), PROSPECT_CONFIG_DIR: join(dir, 'config') };
  return {
    dir,
    run: (args: string[], input?: string) =>
      runInProcess(args, { url: sandbox.url, apiKey: KEY, env, cwd: dir, input }),
  };
}

describe('prospect forget (this machine)', () => {
  it('keeps the address out of contacts, verify and pipeline, unpaid and counted; the file holds no address', async () => {
    const me = await machine();
    const domain = 'meadowfitness.com';
    const before = ndjsonRecords((await me.run(['contacts', domain, '--format', 'ndjson'])).stdout);
    const person = before.find((row) => row.business_email && row.email_freshness === 'stale');
    const address: string = person.business_email;

    const forgot = await me.run(['forget', address.toUpperCase()]);
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.stderr).toContain('forgot 1 address');
    const stored = await readFile(join(me.dir, 'cache', 'suppressions.sqlite'));
    expect(stored.includes(Buffer.from(address.toLowerCase()))).toBe(false);
    expect(stored.includes(Buffer.from(address))).toBe(false);

    const contacts = await me.run([
      'contacts',
      domain,
      '--stale',
      'verify',
      '--yes',
      '--format',
      'ndjson',
      '--summary',
      's.json',
    ]);
    expect(contacts.code, contacts.stderr).toBe(0);
    const rows = ndjsonRecords(contacts.stdout);
    expect(rows.map((row) => row.business_email)).toEqual(
      before.map((row) => row.business_email).filter((email) => email !== address),
    );
    const summary = JSON.parse(await readFile(join(me.dir, 's.json'), 'utf8'));
    expect(summary.excluded.suppressed).toEqual({ entries: 1, removed: 1 });

    const units = (await sandboxStats(sandbox.url)).units.growth;
    const verify = await me.run(['verify', address, 'someone.else@example.org', '--yes', '--format', 'ndjson']);
    expect(verify.code, verify.stderr).toBe(0);
    expect(ndjsonRecords(verify.stdout).map((row) => row.business_email ?? row.email)).toEqual([
      'someone.else@example.org',
    ]);
    const after = await sandboxStats(sandbox.url);
    expect(after.units.growth - units).toBe(1);
    expect(after.verified_emails).not.toContain(address.toLowerCase());

    const alone = await me.run(['verify', address, '--yes']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('no address is left to verify');

    const list = await me.run(['forget', '--list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^1 address suppressed in this machine's store/);
    expect(list.stdout).not.toContain(address);
  });

  it('pipeline: the address is neither written nor paid for, and counted as suppressed', async () => {
    const me = await machine();
    const set = ['pipeline', '-t', 'Shopify', '--country', 'US', '--max', '5', '-s', 'cxo,vp', '--format', 'ndjson'];
    const first = ndjsonRecords((await me.run(set)).stdout);
    const stale = first.filter((row) => row.business_email && row.email_freshness === 'stale');
    const gone = stale.slice(0, 2).map((row) => row.business_email as string);
    await writeFile(join(me.dir, 'crm.csv'), `First Name,Email\nA,${gone[0]}\nB,${gone[1]}\n`);
    const forgot = await me.run(['forget', '--file', 'crm.csv']);
    expect(forgot.code, forgot.stderr).toBe(0);

    const charged = new Set((await sandboxStats(sandbox.url)).verified_emails as string[]);
    const paid = await me.run([...set, '--stale', 'verify', '--yes', '--summary', 'p.json']);
    expect(paid.code, paid.stderr).toBe(0);
    const written = ndjsonRecords(paid.stdout).map((row) => row.business_email);
    for (const address of gone) expect(written).not.toContain(address);
    expect(written.length).toBe(first.length - 2);
    const newlyCharged = ((await sandboxStats(sandbox.url)).verified_emails as string[]).filter((a) => !charged.has(a));
    expect(newlyCharged.length).toBeGreaterThan(0);
    for (const address of gone) expect(newlyCharged).not.toContain(address.toLowerCase());
    const summary = JSON.parse(await readFile(join(me.dir, 'p.json'), 'utf8'));
    expect(summary.excluded.suppressed).toEqual({ entries: 2, removed: 2 });
  });

  it('refuses what is not an address, before anything is written (exit 2)', async () => {
    const me = await machine();
    const run = await me.run(['forget', 'a@b.com', 'not-an-address']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('"not-an-address" is not an address');
    const list = await me.run(['forget', '--list']);
    expect(list.stdout).toMatch(/^0 addresses suppressed/);
    expect((await me.run(['forget'])).code).toBe(2);
  });
});

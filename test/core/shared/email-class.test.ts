/**
 * email_class (issue 46): each address judged for free from the maintained lists; --deliverable-only
 * leaves role and disposable rows out unless --keep names them; no unit is paid for a disposable
 * address (the units counted at the sandbox, which records the addresses it charged for).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emailClass, parseKeptClasses } from '../../../src/core/shared/email-class.js';
import { runInProcess } from '../../helpers/cli.js';
import { expectedEmailClass } from '../../helpers/email-class.js';
import { sandboxStats } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, TEST_AS_OF, type RunningSandbox } from '../../helpers/sandbox.js';

describe('emailClass', () => {
  it.each([
    ['info@acme.com', 'acme.com', 'role'],
    ['Sales+EU@acme.com', 'acme.com', 'role'],
    ['jane.doe@gmail.com', 'acme.com', 'webmail'],
    ['jane.doe@gmail.com', 'gmail.com', 'personal'],
    ['jane.doe@mailinator.com', 'acme.com', 'disposable'],
    ['info@mailinator.com', 'acme.com', 'disposable'],
    ['info@gmail.com', 'acme.com', 'role'],
    ['jane.doe@sub.mailinator.com', 'acme.com', 'disposable'],
    ['jane.doe@acme.com', 'acme.com', 'personal'],
    ['', 'acme.com', ''],
    [null, 'acme.com', ''],
  ])('%s at %s is %s', (email, domain, expected) => {
    expect(emailClass(email, domain)).toBe(expected);
  });

  it('--keep takes role and disposable only, and only with --deliverable-only', () => {
    expect(parseKeptClasses('Role, disposable,role', true)).toEqual(['role', 'disposable']);
    expect(parseKeptClasses(undefined, false)).toEqual([]);
    expect(() => parseKeptClasses('role', false)).toThrow(/only applies with --deliverable-only/);
    expect(() => parseKeptClasses('webmail', true)).toThrow(/"webmail": not a class/);
    expect(() => parseKeptClasses(' , ', true)).toThrow(/an empty --keep/);
  });
});

describe('email_class on rows, against the sandbox', () => {
  let sandbox: RunningSandbox;
  const key = SANDBOX_KEYS.growth;
  // A company of the test dataset with a role, a webmail and a disposable address among its contacts.
  const domain = 'meadowfitness.com';
  beforeAll(async () => {
    sandbox = await startTestSandbox({ recordTraffic: true });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  const rowsOf = (stdout: string) =>
    stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));

  it('--deliverable-only leaves role and disposable rows out, unpaid; --keep role keeps the role ones', async () => {
    // A sandbox of its own: what it charged is this case's alone, whatever ran before it (the cases below pay).
    const own = await startTestSandbox({ recordTraffic: true });
    try {
      await deliverableOnly(own);
    } finally {
      await own.close();
    }
  });

  async function deliverableOnly(sandbox: RunningSandbox): Promise<void> {
    const dir = { url: sandbox.url, apiKey: key };
    // The test data's days are 2025's: a --max-age reaching back there leaves some addresses fresh.
    const age = ['--max-age', `${Math.round((Date.now() - Date.parse(TEST_AS_OF)) / 86_400_000) + 400}d`];
    const all = rowsOf((await runInProcess(['contacts', domain, ...age, '--format', 'ndjson'], dir)).stdout);
    const roles = all.filter((row) => expectedEmailClass(row.business_email, domain) === 'role');
    const only = await runInProcess(
      ['contacts', domain, '--deliverable-only', '--stale', 'verify', '--yes', '--format', 'ndjson', '-v'],
      dir,
    );
    expect(only.code, only.stderr).toBe(0);
    const written = rowsOf(only.stdout);
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((row) => ['role', 'disposable'].includes(row.email_class))).toEqual([]);
    const charged = new Set<string>((await sandboxStats(sandbox.url)).verified_emails);
    for (const row of roles) expect(charged.has(row.business_email.toLowerCase()), row.business_email).toBe(false);
    expect(only.stderr).toMatch(/Left out by --deliverable-only: no email \d+, role [1-9]\d*, disposable [1-9]/);

    const keep = await runInProcess(
      ['contacts', domain, ...age, '--deliverable-only', '--keep', 'role', '--format', 'ndjson'],
      dir,
    );
    expect(keep.code, keep.stderr).toBe(0);
    const kept = rowsOf(keep.stdout).filter((row) => row.email_class === 'role');
    // Without a paid check only the fresh ones are deliverable; the role class no longer keeps any out.
    expect(kept.map((row) => row.business_email)).toEqual(
      roles.filter((row) => row.email_freshness === 'fresh').map((row) => row.business_email),
    );
  }

  it('contacts --stale verify: every row classed, no unit for a disposable address', async () => {
    const before = await sandboxStats(sandbox.url);
    const run = await runInProcess(['contacts', domain, '--stale', 'verify', '--yes', '--format', 'ndjson'], {
      url: sandbox.url,
      apiKey: key,
    });
    expect(run.code, run.stderr).toBe(0);
    const rows = rowsOf(run.stdout);
    for (const row of rows)
      expect(row.email_class, row.business_email).toBe(expectedEmailClass(row.business_email, domain));
    const disposable = rows.filter((row) => row.email_class === 'disposable');
    expect(disposable.length).toBeGreaterThan(0);
    expect(rows.some((row) => row.email_class === 'role')).toBe(true);
    expect(rows.some((row) => row.email_class === 'webmail')).toBe(true);
    const after = await sandboxStats(sandbox.url);
    const charged = new Set<string>(after.verified_emails);
    for (const row of disposable) expect(charged.has(row.business_email.toLowerCase())).toBe(false);
    expect(after.units.growth).toBeGreaterThan(before.units.growth);
  });

  it('verify: a disposable address is classed and never sent; the summary counts each class', async () => {
    const addresses = ['info@acme-test.com', 'jane.doe@gmail.com', 'john.roe@mailinator.com', 'a.person@acme-test.com'];
    const before = await sandboxStats(sandbox.url);
    const run = await runInProcess(['verify', ...addresses, '--yes', '--no-cache', '--format', 'ndjson', '-v'], {
      url: sandbox.url,
      apiKey: key,
    });
    expect(run.code, run.stderr).toBe(0);
    const rows = rowsOf(run.stdout);
    expect(rows.map((row) => row.email_class)).toEqual(['role', 'webmail', 'disposable', 'personal']);
    expect(rows[2].verification).toBe('');
    const after = await sandboxStats(sandbox.url);
    expect(after.units.growth - before.units.growth).toBe(3);
    expect(after.verified_emails).not.toContain('john.roe@mailinator.com');
    expect(run.stderr).toContain('personal 1, role 1, webmail 1, disposable 1; 1 disposable address never paid for');
  });
});

/**
 * The sandbox plays other services (issue 42, point 6), and the user's commands meet them: variant ×
 * command, each run in process against an in-process sandbox of that variant. Each outcome is either
 * the control run's rows (read back as plain JSON lines, compared by what a list is made of: domains,
 * addresses, their dates, verification statuses in one vocabulary) or a non-zero exit whose message
 * names the setting that adapts the client. Never exit 0 or 3 with less.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VariantName } from '../../src/sandbox/variant-names.js';
import { runInProcess, scratchDir, type CliRun } from '../helpers/cli.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type TestSandbox } from '../helpers/sandbox.js';

type Command = 'companies' | 'count' | 'contacts' | 'verify' | 'pipeline' | 'pipeline-paged';
const COMMANDS: readonly Command[] = ['companies', 'count', 'contacts', 'verify', 'pipeline'];
const LISTINGS: readonly Command[] = ['companies', 'count', 'pipeline-paged'];
/**
 * WordPress in a 1,000-company sandbox: a few hundred companies, in pages of PAGE_SIZE, so every
 * listing crosses pages (and a split listing's parts do) while each run stays small.
 */
const TECHNOLOGY = 'WordPress';
const SANDBOX_COMPANIES = 1000;
const PAGE_SIZE = ['--page-size', '100'];

/** The verification vocabularies of the variants, read onto the contract's (the test's own reading). */
const OURS: Readonly<Record<string, string>> = {
  deliverable: 'valid',
  undeliverable: 'invalid',
  accept_all: 'risky',
  'catch-all': 'risky',
  catchall: 'risky',
};

interface Expectation {
  variants: VariantName[];
  /** works: the control's rows with no setting. needs: fails naming the setting, and works once set. */
  outcome: 'works' | { setting: string; env?: Record<string, string> };
  /** The commands it applies to (default: all). */
  commands?: readonly Command[];
}

const TABLE: readonly Expectation[] = [
  {
    variants: ['paging-link-header'],
    outcome: 'works',
    commands: LISTINGS,
  },
  {
    variants: ['paging-meta-next-cursor'],
    outcome: 'works',
    commands: LISTINGS,
  },
  { variants: ['paging-next-url'], outcome: 'works', commands: LISTINGS },
  { variants: ['paging-link-params'], outcome: 'works', commands: LISTINGS },
  { variants: ['paging-next-relative'], outcome: 'works', commands: LISTINGS },
  {
    // has_more with the last row's id: which parameter takes the id cannot be guessed (contract.ts).
    variants: ['paging-has-more'],
    outcome: { setting: 'cursor-param' },
    commands: LISTINGS,
  },
  {
    variants: ['paging-offset'],
    outcome: { setting: 'paging', env: { PROSPECT_PAGING: 'offset' } },
    commands: LISTINGS,
  },
  {
    variants: ['cursor-param-page-token'],
    outcome: { setting: 'cursor-param', env: { PROSPECT_CURSOR_PARAM: 'page_token' } },
    commands: LISTINGS,
  },
  {
    variants: ['cursor-param-after'],
    outcome: { setting: 'cursor-param', env: { PROSPECT_CURSOR_PARAM: 'after' } },
    commands: LISTINGS,
  },
  { variants: ['cursor-nonce'], outcome: 'works', commands: LISTINGS },
  { variants: ['page-size-per-page'], outcome: 'works', commands: LISTINGS },
  { variants: ['null-optional-fields'], outcome: 'works' },
  { variants: ['numeric-strings'], outcome: 'works' },
  // Without meta a count has no contact_count to give: it says n/a (test/api/client.variants.test.ts), not 0.
  { variants: ['no-meta'], outcome: 'works', commands: ['companies', 'contacts', 'verify', 'pipeline'] },
  { variants: ['envelope-results'], outcome: 'works' },
  {
    variants: ['contact-fields-email'],
    outcome: {
      setting: 'contact-fields',
      env: { PROSPECT_CONTACT_FIELDS: 'business_email=email,business_email_last_seen=last_seen_at' },
    },
    commands: ['contacts', 'pipeline'],
  },
  {
    variants: ['contact-date-dmy'],
    outcome: { setting: 'date-format', env: { PROSPECT_DATE_FORMAT: 'dmy' } },
    commands: ['contacts', 'pipeline'],
  },
  {
    variants: ['contact-date-epoch'],
    outcome: 'works',
    commands: ['contacts', 'pipeline'],
  },
  {
    variants: ['contact-date-time'],
    outcome: 'works',
    commands: ['contacts', 'pipeline'],
  },
  { variants: ['verify-deliverable'], outcome: 'works', commands: ['verify', 'pipeline'] },
  { variants: ['verify-zerobounce'], outcome: 'works', commands: ['verify', 'pipeline'] },
  { variants: ['verify-neverbounce'], outcome: 'works', commands: ['verify', 'pipeline'] },
  { variants: ['verify-upper-case'], outcome: 'works', commands: ['verify', 'pipeline'] },
  {
    // ok and error are read as unknown, never valid: the rows are written, and the run exits 5 naming the setting.
    variants: ['verify-millionverifier'],
    outcome: { setting: 'verify-statuses', env: { PROSPECT_VERIFY_STATUSES: 'ok=valid,error=unknown' } },
    commands: ['verify', 'pipeline'],
  },
  { variants: ['errors-message', 'errors-array', 'errors-problem-json'], outcome: 'works' },
  {
    variants: ['verify-path-moved'],
    outcome: { setting: 'verify-path', env: { PROSPECT_VERIFY_PATH: '/api/v1/email-verifier' } },
    commands: ['verify', 'pipeline'],
  },
  {
    variants: ['verify-post-only'],
    outcome: { setting: 'verify-method', env: { PROSPECT_VERIFY_METHOD: 'POST' } },
    commands: ['verify', 'pipeline'],
  },
  {
    variants: ['verify-param-address'],
    outcome: { setting: 'verify-param', env: { PROSPECT_VERIFY_PARAM: 'address' } },
    commands: ['verify', 'pipeline'],
  },
  { variants: ['page-size-capped'], outcome: 'works', commands: LISTINGS },
  { variants: ['cursor-number'], outcome: 'works', commands: LISTINGS },
  // has_more with no cursor: a cursor lost, or the last id under a parameter only a setting can name.
  { variants: ['has-more-null-cursor'], outcome: { setting: 'cursor-param' }, commands: LISTINGS },
  // The rows an object further down: exit 5 showing what `data` was, no setting can say where.
  { variants: ['envelope-nested'], outcome: { setting: 'unexpected shape' } },
  // meta.count may be a page's count or the total: not guessed, so count says n/a (not 0) for its contacts.
  { variants: ['meta-count'], outcome: 'works', commands: ['companies', 'pipeline-paged'] },
  {
    variants: ['upper-case-fields'],
    outcome: { setting: 'unexpected shape' },
    commands: ['companies', 'count', 'contacts', 'pipeline'],
  },
  { variants: ['contact-date-zone'], outcome: 'works', commands: ['contacts', 'pipeline'] },
  // Contacts grouped per domain: no setting reads them (the rows sit one level down). Exit 5 either way:
  // a small group fails the field check, a large one (contacts' 1,000 a call) the bound on unknown fields.
  { variants: ['contacts-grouped'], outcome: { setting: 'unexpected shape' }, commands: ['contacts'] },
  { variants: ['contacts-grouped'], outcome: { setting: 'contact-fields' }, commands: ['pipeline'] },
  { variants: ['contact-emails-array'], outcome: { setting: 'contact-fields' }, commands: ['contacts', 'pipeline'] },
  { variants: ['contact-empty-strings'], outcome: 'works', commands: ['contacts', 'pipeline'] },
  // A verify answer prospect cannot read: the rows written, exit 5, the output said to be incomplete.
  { variants: ['verify-result-envelope'], outcome: { setting: 'unexpected shape' }, commands: ['verify', 'pipeline'] },
  { variants: ['verify-is-valid'], outcome: { setting: 'unexpected shape' }, commands: ['verify', 'pipeline'] },
  { variants: ['rate-limit-no-retry-after'], outcome: 'works' },
];

let control: TestSandbox;
let domains: string[];
let emails: string[];
const controlRows = new Map<Command, string[]>();
const sandboxes: TestSandbox[] = [];

function argsOf(command: Command): string[] {
  switch (command) {
    case 'companies':
      return ['companies', '-t', TECHNOLOGY, ...PAGE_SIZE, '-f', 'ndjson'];
    case 'count':
      return ['count', '-t', TECHNOLOGY, '-f', 'csv'];
    case 'contacts':
      return ['contacts', ...domains, '-f', 'ndjson'];
    case 'verify':
      return ['verify', ...emails, '--yes', '-f', 'ndjson'];
    case 'pipeline':
      return [
        'pipeline',
        '-t',
        'Shopify',
        '-s',
        'cxo,vp,director',
        '--stale',
        'verify',
        '--yes',
        '--verify-budget',
        '5',
        '-f',
        'ndjson',
      ];
    case 'pipeline-paged':
      return ['pipeline', '-t', TECHNOLOGY, ...PAGE_SIZE, '--max', '220', '-s', 'cxo', '-f', 'ndjson'];
  }
}

const lines = (text: string) => text.split('\n').filter((line) => line.trim() !== '');
const status = (word: unknown) => (typeof word === 'string' ? (OURS[word] ?? word) : String(word));

/** What a list is made of, one string a row, read as plain JSON lines (count: its CSV line as it is). */
function keysOf(command: Command, stdout: string): string[] {
  if (command === 'count') return lines(stdout);
  const rows = lines(stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
  return rows.map((r) => {
    if (command === 'companies') return String(r.domain);
    if (command === 'verify') return `${String(r.email)} ${status(r.verification)}`;
    const contact = `${String(r.domain)} ${String(r.business_email)} ${String(r.business_email_last_seen)}`;
    return command === 'pipeline' ? `${contact} ${status(r.verification)}` : contact;
  });
}

async function runAgainst(sandbox: TestSandbox, command: Command, env: Record<string, string> = {}): Promise<CliRun> {
  return runInProcess(argsOf(command), { url: sandbox.url, apiKey: SANDBOX_KEYS.growth, env, timeoutMs: 60_000 });
}

beforeAll(async () => {
  control = await startTestSandbox({ companies: SANDBOX_COMPANIES });
  const companies = await runAgainst(control, 'companies');
  domains = keysOf('companies', companies.stdout).slice(0, 40);
  const contacts = await runInProcess(['contacts', ...domains, '-f', 'ndjson'], {
    url: control.url,
    apiKey: SANDBOX_KEYS.growth,
  });
  emails = lines(contacts.stdout)
    .map((line) => (JSON.parse(line) as { business_email: string | null }).business_email)
    .filter((email): email is string => email !== null)
    .slice(0, 12);
  for (const command of [...COMMANDS, 'pipeline-paged'] as const) {
    const run = command === 'companies' ? companies : await runAgainst(control, command);
    expect(run.code, `${command} against the control: ${run.stderr}`).toBe(0);
    controlRows.set(command, keysOf(command, run.stdout).sort());
  }
}, 120_000);
afterAll(() => Promise.all([control?.close(), ...sandboxes.map((s) => s.close())]));

async function sandboxOf(variants: VariantName[], asOf?: string): Promise<TestSandbox> {
  const sandbox = await startTestSandbox({ companies: SANDBOX_COMPANIES, variants, ...(asOf && { asOf }) });
  sandboxes.push(sandbox);
  return sandbox;
}

function expectControlRows(command: Command, run: CliRun): void {
  expect(run.code, run.stderr).toBe(0);
  expect(keysOf(command, run.stdout).sort()).toEqual(controlRows.get(command));
}

/** Not exit 0 or 3 with less: a failure (not "nothing matched") whose message names the setting. */
function expectFailureNaming(setting: string, run: CliRun): void {
  expect(run.code, run.stderr).not.toBe(0);
  expect(run.code).not.toBe(3);
  expect(run.stderr).toContain(setting);
}

describe('variant × command', () => {
  for (const row of TABLE) {
    for (const command of row.commands ?? COMMANDS) {
      const name = `${row.variants.join(' + ')} × ${command}`;
      const { outcome } = row;
      if (outcome === 'works') {
        it(`${name}: the control's rows, with no setting`, async () => {
          expectControlRows(command, await runAgainst(await sandboxOf(row.variants), command));
        });
        continue;
      }
      it(`${name}: the control's rows, or a failure naming ${outcome.setting}`, async () => {
        const run = await runAgainst(await sandboxOf(row.variants), command);
        if (run.code === 0) expectControlRows(command, run);
        else expectFailureNaming(outcome.setting, run);
      });
      if (outcome.env === undefined) continue;
      it(`${name}: the control's rows once ${outcome.setting} is set`, async () => {
        expectControlRows(command, await runAgainst(await sandboxOf(row.variants), command, outcome.env));
      });
    }
  }
});

describe('paging-offset × a listing split into parts', () => {
  it('the parts walked by offset give the single cursor walk, byte for byte', async () => {
    // WordPress's 322 companies of the control's dataset in pages of 50: more than 4 pages, so
    // --concurrency 4 splits them, into parts of about two pages each.
    const plain = control;
    const offsets = await sandboxOf(['paging-offset']);
    const args = ['companies', '-t', TECHNOLOGY, '-f', 'csv', '--page-size', '50', '--concurrency', '4', '--verbose'];
    const run = (sandbox: TestSandbox, env: Record<string, string> = {}) =>
      runInProcess(args, { url: sandbox.url, apiKey: SANDBOX_KEYS.growth, env, timeoutMs: 60_000 });
    const single = await run(plain);
    const offset = await run(offsets, { PROSPECT_PAGING: 'offset' });
    expect(offset.code, offset.stderr).toBe(0);
    expect(offset.stderr).toMatch(/as \d parts at once/);
    expect(lines(offset.stdout).length).toBeGreaterThan(1 + 4 * 50);
    expect(offset.stdout).toBe(single.stdout);
  });
});

/** Point 5: a verify endpoint that refuses the first paid call stops paying, and every free row is kept. */
describe('a verify endpoint that refuses: every free row written, a non-zero exit, 0 units', () => {
  const REFUSALS: ReadonlyArray<{ variant: VariantName; code: number; names: string }> = [
    { variant: 'verify-path-moved', code: 5, names: 'verify-path' },
    { variant: 'verify-post-only', code: 5, names: 'verify-method' },
    { variant: 'verify-param-address', code: 5, names: 'verify-param' },
    { variant: 'verify-no-credits', code: 4, names: 'credits' },
  ];
  // The pipeline's run of the table above pays too (budget 5); contacts is given the same budget.
  const paidRun = (command: 'pipeline' | 'contacts'): string[] =>
    command === 'pipeline'
      ? argsOf('pipeline')
      : ['contacts', ...domains, '--stale', 'verify', '--yes', '--verify-budget', '5', '-f', 'ndjson'];
  /** The control's rows without their verification: what a refused run must still write. */
  const freeRows = (command: 'pipeline' | 'contacts') =>
    controlRows
      .get(command)!
      .map((key) => (command === 'pipeline' ? key.replace(/ \S+$/, '') : key))
      .sort();

  for (const { variant, code, names } of REFUSALS) {
    it.each(['pipeline', 'contacts'] as const)(`${variant} × %s --stale verify`, async (command) => {
      const sandbox = await sandboxOf([variant]);
      const run = await runInProcess(paidRun(command), { url: sandbox.url, apiKey: SANDBOX_KEYS.growth });
      expect(run.code, run.stderr).toBe(code);
      expect(run.stderr).toContain(names);
      const rows = lines(run.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
      const keys = rows.map(
        (r) => `${String(r.domain)} ${String(r.business_email)} ${String(r.business_email_last_seen)}`,
      );
      expect(keys.sort()).toEqual(freeRows(command));
      expect(rows.filter((r) => r.verified_at !== null)).toEqual([]);
      expect(sandbox.stats().units).toEqual({ free: 0, starter: 0, growth: 0, scale: 0 });
    });
  }

  it('statuses no vocabulary names: rows written as unknown, exit 5, kept with their words, never paid again', async () => {
    const sandbox = await sandboxOf(['verify-millionverifier']);
    // A ledger that reuses the sandbox's results, whose dates are its snapshot day's.
    const env = { PROSPECT_CACHE_DIR: await scratchDir('variants-unknown-words') };
    const args = [...argsOf('verify'), '--cache-ttl', '120m'];
    const valid = controlRows.get('verify')!.filter((key) => key.endsWith(' valid')).length;
    expect(valid).toBeGreaterThan(0);
    const first = await runInProcess(args, { url: sandbox.url, apiKey: SANDBOX_KEYS.growth, env });
    expect(first.code, first.stderr).toBe(5);
    expect(first.stderr).toContain(`answered with a status prospect does not know ("ok" ${valid}`);
    expect(first.stderr).toContain('prospect config set verify-statuses ok=');
    // The control's rows, each valid one written as unknown (MillionVerifier's "error" is unknown too).
    const expected = controlRows.get('verify')!.map((key) => key.replace(/ valid$/, ' unknown'));
    expect(keysOf('verify', first.stdout).sort()).toEqual(expected.sort());
    expect(sandbox.stats().units.growth).toBe(emails.length);
    // Again: nothing paid, and the words read from the ledger are still unknown, said again.
    const second = await runInProcess(args, { url: sandbox.url, apiKey: SANDBOX_KEYS.growth, env });
    expect(second.code, second.stderr).toBe(5);
    expect(keysOf('verify', second.stdout).sort()).toEqual(expected.sort());
    // Once the setting says what the words mean, the kept results read as the control's, unpaid.
    const setting = { ...env, PROSPECT_VERIFY_STATUSES: 'ok=valid,error=unknown' };
    const third = await runInProcess(args, { url: sandbox.url, apiKey: SANDBOX_KEYS.growth, env: setting });
    expectControlRows('verify', third);
    expect(sandbox.stats().units.growth).toBe(emails.length);
  });

  it('credits that run out after 3: the 3 paid results are in the output and the ledger, never paid again', async () => {
    // A sandbox of today: results it checked are young enough for the ledger to reuse (--cache-ttl).
    const sandbox = await sandboxOf(['verify-credits-run-out'], todayUtc());
    const env = { PROSPECT_CACHE_DIR: await scratchDir('variants-ledger') };
    const first = await runInProcess(paidRun('pipeline'), { url: sandbox.url, apiKey: SANDBOX_KEYS.growth, env });
    expect(first.code, first.stderr).toBe(4);
    const verified = (run: CliRun) =>
      lines(run.stdout)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((r) => r.verified_at !== null)
        .map((r) => `${String(r.business_email)} ${String(r.verification)}`);
    expect(verified(first)).toHaveLength(3);
    expect(sandbox.stats().units.growth).toBe(3);
    const second = await runInProcess(paidRun('pipeline'), { url: sandbox.url, apiKey: SANDBOX_KEYS.growth, env });
    expect(second.code, second.stderr).toBe(4);
    expect(verified(second)).toEqual(expect.arrayContaining(verified(first)));
    expect(sandbox.stats().units.growth).toBe(3);
  });
});

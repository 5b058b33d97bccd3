/**
 * The library API as a user installs it: imported by the package name, which resolves (package
 * self-reference, "exports") to the built dist/ — so this needs `npm run build` first, as `npm test` does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as library from 'prospect-cli';
import { createClient, type CompanyRow, type ProspectClient } from 'prospect-cli';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from './helpers/sandbox.js';

let sandbox: RunningSandbox;
let client: ProspectClient;

beforeAll(async () => {
  sandbox = await startTestSandbox({ seed: 3 });
  client = createClient({ baseUrl: sandbox.url, apiKey: SANDBOX_KEYS.growth, pageSize: 25 });
});

afterAll(async () => {
  await client?.close();
  await sandbox?.close();
});

describe("import { createClient } from 'prospect-cli'", () => {
  it('pages companies from a sandbox, following the cursor', async () => {
    const rows: CompanyRow[] = [];
    const cursors: Array<string | null> = [];
    for await (const page of client.companies({ technology: 'Shopify' })) {
      rows.push(...page.data);
      cursors.push(page.cursor);
      if (cursors.length === 3) break;
    }
    expect(cursors).toHaveLength(3);
    expect(cursors[0]).toBeNull();
    expect(new Set(cursors.slice(1)).size).toBe(2);
    expect(rows).toHaveLength(75);
    expect(new Set(rows.map((row) => row.domain)).size).toBe(75);
    for (const row of rows) expect(row.technologies.map((entry) => entry.t.toLowerCase())).toContain('shopify');
  });
});

describe('errors carry facts', () => {
  it('a plan without contacts: AuthError with status, code, reason and the host:port asked', async () => {
    const free = createClient({ baseUrl: sandbox.url, apiKey: SANDBOX_KEYS.free });
    const error = await free
      .contacts({ domains: ['valleyharbor.com'] })
      .finally(() => free.close())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(library.AuthError);
    expect(error).toMatchObject({ status: 403, code: 'plan_required', host: new URL(sandbox.url).host });
    expect((error as library.RequestError).reason.length).toBeGreaterThan(0);
  });
});

describe('the library speaks no CLI', () => {
  it('exports the client, its limits and defaults, and its errors: no exit code, no CLI error, no helper', () => {
    expect(Object.keys(library).sort()).toEqual([
      'AbortedError',
      'AuthError',
      'BadRequestError',
      'CLIENT_DEFAULTS',
      'CONTRACT_DEFAULTS',
      'ClientOptionError',
      'DEFAULT_MAX_ANSWER_BYTES',
      'MAX_ANSWER_BYTES_LIMIT',
      'MAX_COMPANIES_PER_PAGE',
      'MAX_CONTACTS_PER_CALL',
      'MAX_DOMAINS_PER_CALL',
      'MalformedResponseError',
      'RETRY_DEFAULTS',
      'RequestError',
      'RequestPacer',
      'SENIORITIES',
      'ServiceError',
      'UnanswerableError',
      'VERDICTS',
      'createClient',
      'decideProxy',
    ]);
    for (const cliName of ['ExitCode', 'EXIT_CODE_DOCS', 'exitCodeOf', 'CliError', 'UsageError', 'tlsFailureError'])
      expect(library).not.toHaveProperty(cliName);
  });
});

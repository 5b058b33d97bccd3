import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../helpers/cli.js';
import {
  companiesPage,
  startScriptedServer,
  type ScriptedResponse,
  type ScriptedServer,
} from '../helpers/scripted-server.js';

/**
 * A service that answers badly: each case must end in one clear line on stderr, exit 5, no stack
 * trace, and no partial output file (an existing file is left as it was). Of the table of malformed
 * answers, the first is spawned and the others run the same main() in process (runInProcess), and
 * so do the redirect, the timeout and the --debug cases: what they show is main()'s, not a process's.
 */
const KEY = 'sk_test_hostile_4f00d';
let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const CASES: Array<{ name: string; script: ScriptedResponse[]; message: RegExp }> = [
  {
    name: 'an HTML error page with status 200',
    script: [{ status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>Bad gateway</body></html>' }],
    message: /HTML/,
  },
  // Two arrays and no `data`: which holds the rows cannot be told (one alone is read as them, issue 42).
  { name: 'JSON of the wrong shape', script: [{ body: { rows: [], more: [], cursor: null } }], message: /data/ },
  {
    name: 'data that is not an array',
    script: [{ body: { ...companiesPage([]), data: { domain: 'a.com' } } }],
    message: /data/,
  },
  {
    name: 'truncated JSON',
    script: [{ status: 200, headers: { 'content-type': 'application/json' }, body: '{"data":[{"domain":"a.co' }],
    message: /JSON/,
  },
  {
    name: 'a next_cursor that repeats',
    script: [{ body: companiesPage(['a.com', 'b.com'], 'c1') }, { body: companiesPage(['c.com'], 'c1') }],
    message: /same cursor/,
  },
  {
    // Issue 34: this crashed the JSON writer's stack (exit 1); now refused when read.
    name: 'a 200,000-deep extra field',
    script: [
      {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(companiesPage(['a.com'], null)).replace(
          '"domain":',
          `"extra":${'['.repeat(200_000)}${']'.repeat(200_000)},"domain":`,
        ),
      },
    ],
    message: /JSON nested deeper than 64 levels/,
  },
  {
    name: 'a 422 without a reason',
    script: [{ status: 422, body: { error: { code: 'no_match' } } }],
    message: /without the reason/,
  },
];

describe('malformed service responses', () => {
  it.each(CASES)('$name: one clear line, exit 5, no partial file', async ({ name, script, message }) => {
    server = await startScriptedServer(script);
    const dir = await scratchDir();
    const target = join(dir, 'out.csv');
    await writeFile(target, 'last week\n');
    const args = ['companies', '-t', 'Shopify', '-o', target, '--max-retries', '1'];
    const run =
      name === CASES[0]!.name
        ? await runCli(args, { url: server.url, apiKey: KEY, cwd: dir })
        : await runInProcess(args, { url: server.url, apiKey: KEY });
    expect(run.code).toBe(5);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n').length).toBeLessThanOrEqual(2);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(await readFile(target, 'utf8')).toBe('last week\n');
    expect(await readdir(dir)).toEqual(['out.csv']);
    expect(server.requests.length).toBeLessThanOrEqual(3);
  });

  it('a redirect to another host is not followed, and the key is never sent there', async () => {
    const elsewhere = await startScriptedServer([{ body: companiesPage(['a.com']) }]);
    try {
      server = await startScriptedServer([
        { status: 302, headers: { location: `${elsewhere.url.replace('127.0.0.1', 'localhost')}/api/v1/companies` } },
      ]);
      const run = await runInProcess(['companies', '-t', 'Shopify'], { url: server.url, apiKey: KEY });
      expect(run.code).toBe(5);
      expect(run.stderr).toMatch(/redirect/);
      expect(elsewhere.requests).toHaveLength(0);
    } finally {
      await elsewhere.close();
    }
  });

  it('a response that never comes is cut off by --timeout and retried, then exit 5', async () => {
    server = await startScriptedServer([{ neverRespond: true }]);
    // No stopwatch: without the cut-off the run would wait for ever (runInProcess gives up after a minute).
    const run = await runInProcess(['companies', '-t', 'Shopify', '--timeout', '1', '--max-retries', '1'], {
      url: server.url,
      apiKey: KEY,
    });
    expect(run.code).toBe(5);
    expect(server.requests).toHaveLength(2);
    expect(run.stderr).toMatch(/no answer from 127\.0\.0\.1:\d+ for \/companies after \d+ attempts \(last: timeout: /);
  });

  it('with --debug, every request is logged with the key redacted, and a stack trace is shown', async () => {
    server = await startScriptedServer([
      { status: 503 },
      { status: 200, headers: { 'content-type': 'text/html' }, body: '<html>' },
    ]);
    const run = await runInProcess(['companies', '-t', 'Shopify', '--debug', '--max-retries', '1'], {
      url: server.url,
      apiKey: KEY,
    });
    expect(run.code).toBe(5);
    expect(run.stderr).toMatch(
      /GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/companies\?technology=Shopify.*Bearer \*\*\*.*503/,
    );
    expect(run.stderr).toMatch(/\n\s+at /);
  });
});

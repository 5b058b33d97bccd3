/**
 * The dataset's notes after a `companies` or `count` run on a terminal (issue 36): one line, with
 * the rest under --verbose. Run in process, stdout and stderr a terminal of 80 columns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../../helpers/cli.js';
import { SANDBOX_KEYS, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.js';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox({ companies: 2_000 });
});
afterAll(async () => {
  await sandbox?.close();
});

const run = (args: string[]) =>
  runInProcess(args, {
    url: sandbox.url,
    apiKey: SANDBOX_KEYS.growth,
    terminal: { columns: 80, rows: 40 },
    env: { TERM: 'dumb' },
  });

describe.each([
  ['companies', ['companies', '-t', 'Shopify', '--max', '5']],
  ['count', ['count', '-t', 'Shopify']],
])('%s on a terminal', (_name, args) => {
  it('ends with one line of dataset notes, not five', async () => {
    const { code, stderr } = await run(args);
    expect(code, stderr).toBe(0);
    const notes = stderr.split('\n').filter((line) => /Source:|Scope:|known for|Sparse fields|--verbose/.test(line));
    expect(notes, stderr).toEqual(['Sparse fields: phone 1/9, linkedin_url 1/4, description 1/3 (--verbose: more).']);
    for (const line of stderr.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it('with --verbose, every note on a line of its own', async () => {
    const { code, stderr } = await run([...args, '--verbose']);
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/^Source: /m);
    expect(stderr).toMatch(/^Scope: /m);
    expect(stderr).toMatch(/are known for/);
  });
});

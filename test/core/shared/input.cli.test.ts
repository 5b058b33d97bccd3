/**
 * The input of a run as only a process shows it (src/core/shared/input.ts, src/io/input/source.ts):
 * a FIFO from bash's process substitution read as a stream (and, for --strict and verify, copied
 * once); `yes | contacts --max 5` ending once the rows are written; a 500 MB single line on a pipe
 * refused with exit 2 in bounded memory under GNU time. The reference runs are made in process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess, runShell } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import { SANDBOX_KEYS, startTestSandbox, todayUtc, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;
let domains: string[];
/** `contacts` of `domains` as CSV, in process: what the FIFO runs must write. */
let expected: string;

beforeAll(async () => {
  sandbox = await startTestSandbox({ asOf: todayUtc() });
  const companies = await runInProcess(['companies', '-t', 'React', '--max', '20', '--format', 'csv'], {
    url: sandbox.url,
    apiKey: KEY,
  });
  expect(companies.code).toBe(0);
  domains = csvRecords(companies.stdout).map((row) => row['domain']!);
  const contacts = await runInProcess(['contacts', ...domains, '--format', 'csv'], { url: sandbox.url, apiKey: KEY });
  expect(contacts.code).toBe(0);
  expected = contacts.stdout;
});
afterAll(async () => {
  await sandbox?.close();
});

/** `prospect ARGS` in bash (eval, so that `<(…)` is bash's own). */
const shell = (script: string) => runShell(script, { url: sandbox.url, apiKey: KEY });
const prospect = (args: string) => `eval "$PROSPECT ${args}"`;

describe('a FIFO is read as a stream', () => {
  it('--domains-file <(…) reads the list (it was refused with ESPIPE), and so does --strict, which copies it once', async () => {
    const list = `<(printf '%s\\n' ${domains.join(' ')})`;
    const streamed = await shell(prospect(`contacts --domains-file ${list} --format csv`));
    expect(streamed.stderr).not.toMatch(/ESPIPE|cannot read/);
    expect(streamed.code).toBe(0);
    expect(streamed.stdout).toBe(expected);
    const strict = await shell(prospect(`contacts --strict --domains-file ${list} --format csv`));
    expect(strict.code).toBe(0);
    expect(strict.stdout).toBe(expected);
  });

  it('verify plans a FIFO before paying and reads it again', async () => {
    const run = await shell(prospect(`verify --dry-run --file <(printf 'a@acme.com\\nb@acme.com\\na@acme.com\\n')`));
    expect(run.code).toBe(0);
    expect(run.stdout + run.stderr).toMatch(/would spend 2 units: 2 unique valid addresses/);
  });
});

it('yes DOMAIN | contacts --max 5 ends once 5 rows are written (it read on forever), and says it stopped there', async () => {
  // Every line after the first is a duplicate: no new domain ever comes, so only stopping the read ends the run.
  const rowsOf = csvRecords(expected).map((row) => row['domain']);
  const domain = domains.find((name) => rowsOf.filter((row) => row === name).length >= 5);
  expect(domain, 'a domain with 5 contacts in the test dataset').toBeDefined();
  const run = await shell(
    `set +o pipefail; yes ${domain} | ${prospect('contacts --max 5 --format csv --summary /dev/stderr')}`,
  );
  expect(run.code).toBe(0);
  expect(csvRecords(run.stdout)).toHaveLength(5);
  expect(run.stderr).toMatch(/"stopped_at_max": true/);
});

it('a 500 MB single line on a pipe: exit 2 naming the line and the limit, under 300 MB of RSS', async () => {
  const run = await shell(
    `head -c 500000000 /dev/zero | tr '\\0' a | eval "/usr/bin/time -v $PROSPECT contacts --format csv"; true`,
  );
  expect(run.stderr).toMatch(
    /standard input line 1: a line longer than 1,048,576 characters, more than prospect reads; nothing more was read\./,
  );
  expect(run.stderr).toMatch(/Exit status: 2/);
  const rssKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr)?.[1]);
  expect(rssKb).toBeGreaterThan(0);
  expect(rssKb).toBeLessThan(300 * 1024);
}, 60_000);

it('a 300 KB xlsx that unzips to 300 MiB: exit 2 naming the file and the limit, under 300 MB of RSS', async () => {
  // python3's zipfile writes the bomb (about 300 KB on disk): one shared string of 300 MiB
  // of one letter, past the 256 MiB limit (the 1 GiB bomb is measured by hand: BENCHMARKS.md 15).
  // Written a MiB at a time: a string of 300 MiB, copied once more to join it, cost python 1 s of CPU.
  const script = `import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    z.writestr('[Content_Types].xml', '<Types/>')
    with z.open('xl/sharedStrings.xml', 'w') as f:
        f.write(b'<sst><si><t>')
        for _ in range(300): f.write(b'a' * (1 << 20))
        f.write(b'</t></si></sst>')`;
  const run = await shell(
    `dir=$(mktemp -d) && python3 -c "${script}" "$dir/bomb.xlsx" && ` +
      `eval "/usr/bin/time -v $PROSPECT contacts --domains-file $dir/bomb.xlsx --format csv"; rm -rf "$dir"; true`,
  );
  expect(run.stderr).toMatch(
    /bomb\.xlsx as an Excel workbook: it unzips to more than 268,435,456 bytes, more than prospect reads; nothing more was read\./,
  );
  expect(run.stderr).toMatch(/Exit status: 2/);
  const rssKb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr)?.[1]);
  expect(rssKb).toBeGreaterThan(0);
  expect(rssKb).toBeLessThan(300 * 1024);
}, 60_000);

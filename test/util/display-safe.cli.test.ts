/**
 * Nothing from the service reaches a terminal as a control (issue 34). A hostile service, here a
 * small HTTP server in front of the test sandbox that puts ESC, CSI, OSC 0/8/52, DCS, C1, BEL, BS
 * and bidi controls into every company name, technology name, contact name and title it passes on
 * (and takes them out of the names sent back to it, so that its answers stay the sandbox's):
 * `companies`, `contacts`, `pipeline`, `count --by` and `verify` on a terminal, in the table view and
 * with --debug, and the terminal receives none of those bytes. A CSV keeps them. CSV, JSON and NDJSON
 * on a terminal (stdout, or -o /dev/tty) show them as visible text instead (issue 41); JSON in a file
 * carries C1, bidi, zero-width and tag characters as \u escapes. The first case runs
 * on a real pty (`script`); the others run main() in process with stdout and stderr a terminal of the
 * same size, whose bytes are what the pty would get.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runInProcess, scratchDir, type CliRun } from '../helpers/cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { SCRIPT, startOnTerminal } from '../helpers/terminal.js';

const KEY = 'sandbox-growth';
const HOSTILE =
  '\u001b]52;c;cm0gLXJmIH4=\u0007' + // OSC 52: write the clipboard
  '\u001b]0;pwned-title\u001b\\' + // OSC 0: the window title, ended by ST
  '\u001b]8;;https://evil.example/\u0007link\u001b]8;;\u0007' + // OSC 8: a hyperlink
  '\u001b[2J\u001b[H' + // CSI: clear the screen, cursor home
  '\u009b31m' + // C1 CSI
  '\u001bP1$rpwned-dcs\u001b\\' + // DCS
  '\u0007\u0008\u0008' + // BEL, BS
  '\u202egnp.exe\u202c\u2066\u2069\u200f\u061c' + // bidi override, isolates, marks
  '\u200bhid\u2060den\ufeff\udb40\udc41\udb40\udc7f' + // zero-width characters, tag characters
  `z${'\u0301'.repeat(40)}`; // a stack of 40 combining marks on one letter
/** Fields whose text the hostile service changes: names and titles, people's and companies', and technologies (`t`). */
const TAINTED = new Set(['company_name', 'full_name', 'first_name', 'last_name', 'title', 't']);

/** What a terminal must never receive from the service (prospect's own CSI for its progress line is allowed). */
const FORBIDDEN: Array<[string, RegExp]> = [
  ['OSC', /\u001b\]/],
  ['DCS', /\u001bP/],
  ['ST', /\u001b\\/],
  ['clear screen', /\u001b\[2J/],
  ['C1', /[\u0080-\u009f]/],
  ['BEL', /\u0007/],
  ['BS', /\u0008/],
  ['bidi', /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/],
  ['zero-width or tag', /[\u200b\u2060\ufeff]|\udb40[\udc00-\udc7f]/],
  ['a stack of marks', /\p{M}{5}/u],
  ['OSC payload', /pwned|evil\.example|cm0gLXJmIH4/],
];

function taint(value: unknown, key?: string): unknown {
  if (typeof value === 'string') return key !== undefined && TAINTED.has(key) ? `${value}${HOSTILE}` : value;
  if (Array.isArray(value)) return value.map((item) => taint(item, key === 'technologies' ? undefined : key));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, taint(item, name)]));
  return value;
}

/** Forwards to the sandbox, with HOSTILE taken out of what is asked and put into what is answered. */
async function startHostile(target: URL): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = encodeURI(decodeURIComponent(req.url ?? '/').replaceAll(HOSTILE, ''))
      .replaceAll('#', '%23')
      .replaceAll('+', '%2B');
    const headers = { ...req.headers, host: target.host, 'accept-encoding': 'identity' };
    const upstream = request(
      { host: target.hostname, port: target.port, path, method: req.method, headers },
      (answer: IncomingMessage) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          let body = Buffer.concat(chunks);
          try {
            body = Buffer.from(JSON.stringify(taint(JSON.parse(body.toString('utf8')))), 'utf8');
          } catch {
            // Not JSON: passed on as it came.
          }
          const { 'content-length': _length, 'content-encoding': _encoding, ...rest } = answer.headers;
          res.writeHead(answer.statusCode ?? 502, { ...rest, 'content-length': body.length });
          res.end(body);
        });
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let sandbox: TestSandbox;
let hostile: { server: Server; url: string };
let dir: string;
let domains: string[];
/** `contacts` of the two domains through the hostile service, as CSV. */
let hostileCsv: CliRun;

beforeAll(async () => {
  // 5,000 companies: enough for every command below (the pipeline's 19 US Shopify leads), at a tenth of the default's cost.
  sandbox = await startTestSandbox({ companies: 5_000 });
  hostile = await startHostile(new URL(sandbox.url));
  dir = await scratchDir();
  // Set-up, in process: two domains with contacts, and their contacts as a CSV for verify.
  const listed = await runInProcess(
    ['companies', '-t', 'Shopify', '--max', '200', '--format', 'csv', '--columns', 'domain'],
    { url: sandbox.url, apiKey: KEY },
  );
  const people = await runInProcess(['contacts', '--format', 'csv', '--columns', 'domain'], {
    url: sandbox.url,
    apiKey: KEY,
    input: listed.stdout,
  });
  // The two with the fewest contacts (10 or more): every run below draws rows, and verify checks few addresses.
  const counts = new Map<string, number>();
  for (const domain of people.stdout.trim().split('\n').slice(1)) counts.set(domain, (counts.get(domain) ?? 0) + 1);
  domains = [...counts]
    .filter(([, count]) => count >= 10)
    .sort(([a, countA], [b, countB]) => countA - countB || a.localeCompare(b))
    .slice(0, 2)
    .map(([domain]) => domain);
  expect(domains).toHaveLength(2);
  // Their contacts through the hostile service, as a CSV: verify's input below, and the first test's subject
  // (made here, so that any order of the tests finds it: --sequence.shuffle).
  hostileCsv = await runInProcess(['contacts', ...domains, '--format', 'csv'], { url: hostile.url, apiKey: KEY });
  await writeFile(join(dir, 'people.csv'), hostileCsv.stdout);
});
afterAll(async () => {
  await new Promise<void>((resolve) => hostile?.server.close(() => resolve()));
  await sandbox?.close();
});

describe('a hostile service', () => {
  it('a CSV keeps the bytes the service sent (data files are not for terminals)', () => {
    expect(hostileCsv.code, hostileCsv.stderr).toBe(0);
    expect(hostileCsv.stdout).toContain(HOSTILE);
  });

  const commands: Record<string, () => string[]> = {
    companies: () => ['companies', '-t', 'Shopify', '--max', '20'],
    contacts: () => ['contacts', ...domains],
    pipeline: () => ['pipeline', '-t', 'Shopify', '--country', 'us', '--seniority', 'cxo', '--per-company', '1'],
    'count --by technology': () => [
      'count',
      '-t',
      'Shopify',
      '--country',
      'germany',
      '--by',
      'technology',
      '--top',
      '8',
    ],
    verify: () => ['verify', '--file', join(dir, 'people.csv'), '--yes', '--no-cache'],
  };
  const cases = Object.keys(commands).flatMap((name) => [
    [name, false],
    [name, true],
  ]) as Array<[string, boolean]>;

  /** Every line of what the terminal got that carries one of the service's controls. */
  const expectNoControls = (screen: string) => {
    for (const [what, pattern] of FORBIDDEN) {
      const line = screen.split('\n').find((text) => pattern.test(text));
      expect(line, `${what} reached the terminal`).toBeUndefined();
    }
  };
  /**
   * A --debug URL carries a name the service gave as percent-encoded text (%1B%5D0%3Bpwned…): no
   * control, but the payload's letters, which are looked for everywhere else.
   */
  const withoutEncodedUrls = (screen: string, debug: boolean) =>
    debug ? screen.replace(/%[0-9A-F]{2}[^\s&]*/g, '') : screen;

  // The first case on a real pty (`script`): the binary, its start-up and its progress line as a person sees them.
  const [firstName, firstDebug] = cases[0]!;
  it.skipIf(SCRIPT.skip)(`${firstName} on a pty (--debug: ${firstDebug}): none of its controls arrive`, async () => {
    const [name, debug] = [firstName, firstDebug];
    const args = [...commands[name]!(), ...(debug ? ['--debug'] : [])];
    const child = startOnTerminal(args, { columns: 200, rows: 50 }, { url: hostile.url, apiKey: KEY });
    child.stdin!.on('error', () => {});
    const run = await finishCli(child, { apiKey: KEY, timeoutMs: 120_000 });
    expect(run.code, run.stdout).toBe(0);
    // The service's text did arrive, as text: a row was drawn.
    expect(run.stdout).toMatch(/[│█]/);
    expectNoControls(withoutEncodedUrls(run.stdout, debug));
  });

  // The others in process (runInProcess): the same main() with stdout and stderr a terminal of the
  // same size, whose bytes are exactly what it writes to a pty. TERM=dumb draws no progress line, whose
  // text is prospect's own (a label and counts); the pty case above draws it.
  it.each(cases.slice(1))(
    '%s on a terminal (--debug: %s): none of its controls arrive (in process)',
    async (name, debug) => {
      const args = [...commands[name]!(), ...(debug ? ['--debug'] : [])];
      const run = await runInProcess(args, {
        url: hostile.url,
        apiKey: KEY,
        timeoutMs: 120_000,
        terminal: { columns: 200, rows: 50 },
        env: { TERM: 'dumb' },
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/[│█]/);
      if (debug) expect(run.stderr).toContain('debug: GET ');
      expectNoControls(withoutEncodedUrls(`${run.stdout}\n${run.stderr}`, debug));
    },
  );
});

/** The raw bytes a terminal acts on or hides text with: none may reach one, whatever the format. */
const RAW: Array<[string, RegExp]> = [
  ['ESC', /\u001b/],
  ['C1', /[\u0080-\u009f]/],
  ['BEL or BS', /[\u0007\u0008]/],
  ['bidi', /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/],
  ['zero-width or tag', /[\u200b\u2060\ufeff]|\udb40[\udc00-\udc7f]/],
  ['a stack of marks', /\p{M}{5}/u],
];
const expectNoRaw = (text: string, where: string) => {
  for (const [what, pattern] of RAW) expect(pattern.test(text), `${what} in ${where}`).toBe(false);
};
/** What the person sees instead: the controls as pictures and code points, so nothing is dropped unseen. */
const VISIBLE = [
  '\u241b]52;c;cm0gLXJmIH4=\u2407',
  '<U+009B>31m',
  '<U+202E>gnp.exe',
  '<U+200B>hid',
  '<U+E0041>',
  '<+36 marks>',
];

describe('CSV, JSON and NDJSON on a terminal (issue 41: by sink, not by format)', () => {
  const dataCommands: Record<string, () => string[]> = {
    companies: () => ['companies', '-t', 'Shopify', '--max', '20'],
    contacts: () => ['contacts', ...domains],
    pipeline: () => ['pipeline', '-t', 'Shopify', '--country', 'us', '--seniority', 'cxo', '--per-company', '1'],
    verify: () => ['verify', '--file', join(dir, 'people.csv'), '--yes', '--no-cache'],
  };
  const cases = Object.keys(dataCommands).flatMap((name) =>
    ['csv', 'json', 'ndjson'].map((format) => [name, format] as [string, string]),
  );

  it.each(cases)('%s --format %s: the controls are shown, never sent (in process)', async (name, format) => {
    const run = await runInProcess([...dataCommands[name]!(), '--format', format], {
      url: hostile.url,
      apiKey: KEY,
      timeoutMs: 120_000,
      terminal: { columns: 200, rows: 50 },
      env: { TERM: 'dumb' },
    });
    expect(run.code, run.stderr).toBe(0);
    expectNoRaw(`${run.stdout}\n${run.stderr}`, `${name} --format ${format}`);
    // CSV shows them as the terminal sink renders them; JSON has already escaped them (ESC as \\u001b).
    const shown = format === 'csv' ? VISIBLE : ['\\u001b]52;c;cm0gLXJmIH4=\\u0007', '\\u009b31m', '\\u202egnp.exe'];
    for (const visible of shown) expect(run.stdout, visible).toContain(visible);
    if (format !== 'csv') expect(run.stdout).toContain('<+36 marks>');
  });

  it('a pipe gets the CSV bytes, and a JSON file the same strings, escaped so that a cat of it is safe', async () => {
    const file = join(dir, 'companies.json');
    const [piped, json] = await Promise.all([
      runInProcess(['companies', '-t', 'Shopify', '--max', '20', '--format', 'csv'], { url: hostile.url, apiKey: KEY }),
      runInProcess(['companies', '-t', 'Shopify', '--max', '20', '-o', file], { url: hostile.url, apiKey: KEY }),
    ]);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toContain(HOSTILE);
    expect(json.code, json.stderr).toBe(0);
    const text = await readFile(file, 'utf8');
    // A stack of marks is text, not a control: a file keeps it (a terminal sink shortens it).
    expectNoRaw(text.replace(/\p{M}+/gu, ''), 'the JSON file');
    expect(text).toContain('\\u202e');
    // python3's json, an independent reader, reads back exactly what the service sent.
    const names = spawnSync(
      'python3',
      [
        '-c',
        'import json,sys; print(json.dumps([r["company_name"] for r in json.load(open(sys.argv[1]))["data"]]))',
        file,
      ],
      { encoding: 'utf8' },
    );
    expect(names.status, names.stderr).toBe(0);
    for (const name of JSON.parse(names.stdout) as string[]) expect(name.endsWith(HOSTILE), name).toBe(true);
  });

  it.skipIf(SCRIPT.skip)('on a pty, --format csv to stdout and -o /dev/tty: no raw control arrives', async () => {
    for (const output of [[], ['-o', '/dev/tty']]) {
      const args = ['companies', '-t', 'Shopify', '--max', '20', '--format', 'csv', ...output];
      const child = startOnTerminal(args, { columns: 200, rows: 50 }, { url: hostile.url, apiKey: KEY });
      child.stdin!.on('error', () => {});
      const run = await finishCli(child, { apiKey: KEY, timeoutMs: 120_000 });
      expect(run.code, run.stdout).toBe(0);
      // prospect's own progress line uses CSI on stderr (the same pty): only the service's sequences are looked for.
      const screen = run.stdout.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').replace(/\u001b[78]/g, '');
      expectNoRaw(screen, `the pty (${output.join(' ') || 'stdout'})`);
      expect(screen).toContain('\u241b]52;c;cm0gLXJmIH4=\u2407');
    }
  });
});

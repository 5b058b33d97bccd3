/**
 * prospect as a person sees it, on a real pseudo-terminal (`script` with `stty cols N`): one table
 * that fits the terminal, a progress bar with a percentage and an ETA, nothing left behind on
 * Ctrl-C, and a terminal that reports 0 columns does not hang a command. One run of each promise is
 * on the pty; the other commands' tables are drawn in process to a terminal of the same size.
 */
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runInProcess, scratchDir, type CliRun } from '../helpers/cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { companiesPage, startScriptedServer, type ScriptedServer } from '../helpers/scripted-server.js';
import {
  SCRIPT,
  screenLines,
  screenWidth,
  startOnTerminal,
  tableLines,
  type TerminalSize,
} from '../helpers/terminal.js';

const KEY = 'sandbox-growth';
let sandbox: TestSandbox;
let dir: string;
/** Two domains that have contacts in the test dataset, found with a CSV run in process (not by the table under test). */
let domainsWithContacts: string[];

/** A promise and the function that settles it. */
function gate(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((settle) => (resolve = settle));
  return { promise, resolve };
}

async function onTerminal(
  args: string[],
  size: TerminalSize,
  env: Record<string, string> = {},
): Promise<CliRun & { screen: string[] }> {
  const child = startOnTerminal(args, size, { url: sandbox.url, apiKey: KEY, env });
  child.stdin!.on('error', () => {});
  const run = await finishCli(child, { apiKey: KEY });
  return { ...run, screen: screenLines(run.stdout) };
}

describe.skipIf(SCRIPT.skip)('on a pseudo-terminal', () => {
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    dir = await scratchDir();
    const companies = await runInProcess(
      ['companies', '-t', 'Shopify', '--max', '30', '--format', 'csv', '--columns', 'domain'],
      { url: sandbox.url, apiKey: KEY },
    );
    const contacts = await runInProcess(['contacts', '--format', 'csv', '--columns', 'domain'], {
      url: sandbox.url,
      apiKey: KEY,
      input: companies.stdout,
    });
    domainsWithContacts = [...new Set(contacts.stdout.trim().split('\n').slice(1))].slice(0, 2);
    expect(domainsWithContacts).toHaveLength(2);
    const people = await runInProcess(['contacts', ...domainsWithContacts, '--format', 'csv'], {
      url: sandbox.url,
      apiKey: KEY,
    });
    await writeFile(join(dir, 'people.csv'), people.stdout);
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  const commands: Record<string, () => string[]> = {
    companies: () => ['companies', '-t', 'Shopify', '--max', '60'],
    contacts: () => ['contacts', ...domainsWithContacts],
    verify: () => ['verify', '--file', join(dir, 'people.csv'), '--yes', '--no-cache'],
    pipeline: () => ['pipeline', '-t', 'Shopify', '--country', 'germany', '--seniority', 'cxo', '--per-company', '1'],
  };

  /** In process, stdout and stderr a terminal of that size (TERM=dumb: no progress line), to draw tables to fit. */
  const inTerminal = (args: string[], size: TerminalSize) =>
    runInProcess(args, { url: sandbox.url, apiKey: KEY, terminal: size, env: { TERM: 'dumb' } });

  /** One table, no line of it wider than the terminal, every line as wide as the others. */
  function checkOneTable(table: string[], columns: number): void {
    expect(table.length).toBeGreaterThan(3);
    for (const line of table) expect(screenWidth(line), line).toBeLessThanOrEqual(columns);
    expect(table.filter((line) => line.startsWith('┌'))).toHaveLength(1);
    expect(table.filter((line) => line.startsWith('└'))).toHaveLength(1);
    // Every line of one table has the same width: the columns line up under the one header.
    expect(new Set(table.map(screenWidth)).size).toBe(1);
  }

  it('at 80 columns on a real pty, companies draws one table that fits', async () => {
    const run = await onTerminal(commands.companies!(), { columns: 80, rows: 30 });
    expect(run.code, run.stdout).toBe(0);
    checkOneTable(tableLines(run.screen), 80);
  });

  // Every other command at 80 columns; at 160 the two widest tables (the rest fit 160 untouched).
  it.each([
    [80, 'contacts'],
    [80, 'verify'],
    [80, 'pipeline'],
    [160, 'verify'],
    [160, 'pipeline'],
  ])('at %i columns, %s draws one table that fits (in process)', async (columns, name) => {
    const run = await inTerminal(commands[name]!(), { columns, rows: 30 });
    expect(run.code, run.stderr).toBe(0);
    checkOneTable(tableLines(run.stdout.split('\n')), columns);
  });

  it('draws no progress line on a terminal that cannot redraw one (TERM=dumb)', async () => {
    const run = await onTerminal(commands.companies!(), { columns: 100, rows: 30 }, { TERM: 'dumb' });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('Fetching companies');
    expect(run.stdout).toContain('Wrote 60 companies to the terminal in ');
  });

  it('contacts of two domains draws exactly one header, the email and the name first', async () => {
    const run = await onTerminal(['contacts', ...domainsWithContacts], { columns: 160, rows: 40 });
    expect(run.code).toBe(0);
    const headers = tableLines(run.screen).filter((line) => /^│ business_email +│ full_name +│ domain /.test(line));
    expect(headers).toHaveLength(1);
    const rows = tableLines(run.screen).filter((line) =>
      domainsWithContacts.some((domain) => line.split('│')[3]?.trim() === domain),
    );
    expect(new Set(rows.map((line) => line.split('│')[3]!.trim()))).toEqual(new Set(domainsWithContacts));
  });

  describe('a contacts table a rep can read (issue 36)', () => {
    /** The addresses of the two domains, from the CSV run in beforeAll (not from the table under test). */
    const emails = async () => {
      const { readFile } = await import('node:fs/promises');
      const { csvRecords } = await import('../helpers/csv.js');
      return csvRecords(await readFile(join(dir, 'people.csv'), 'utf8')).map((record) => record['business_email']!);
    };

    function checkTable(screen: string[], columns: number, addresses: string[]): void {
      const framed = tableLines(screen).filter((line) => line.startsWith('│'));
      const cells = framed.map((line) =>
        line
          .split('│')
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );
      const [header, ...rows] = cells;
      expect(header!.slice(0, 2)).toEqual(['business_email', 'full_name']);
      // Every row shows its whole address (all of these are 40 characters or fewer).
      expect(addresses.every((address) => address.length <= 40)).toBe(true);
      expect(rows.map((row) => row[0])).toEqual(addresses);
      for (const [index, name] of header!.entries())
        expect(
          rows.some((row) => row[index] !== ''),
          `${name} is empty in every row`,
        ).toBe(true);
      for (const line of screen) expect(screenWidth(line), line).toBeLessThanOrEqual(columns);
    }

    it('on a real pty at 60 columns: the full email and the name first, no empty column', async () => {
      const run = await onTerminal(['contacts', ...domainsWithContacts], { columns: 60, rows: 40 });
      expect(run.code).toBe(0);
      checkTable(run.screen, 60, await emails());
    });

    it.each([80, 120, 200])('at %i columns the same (in process, a terminal of that size)', async (columns) => {
      const run = await runInProcess(['contacts', ...domainsWithContacts], {
        url: sandbox.url,
        apiKey: KEY,
        terminal: { columns, rows: 40 },
        env: { TERM: 'dumb' },
      });
      expect(run.code, run.stderr).toBe(0);
      checkTable(run.stdout.split('\n'), columns, await emails());
      for (const line of run.stderr.split('\n')) expect(screenWidth(line), line).toBeLessThanOrEqual(columns);
    });
  });

  describe('a terminal that reports 0 columns and 0 rows', () => {
    const zero = { columns: 0, rows: 0 };
    it('companies on a real pty ends, with bounded output, as on an 80-column terminal', async () => {
      const run = await onTerminal(commands.companies!(), zero);
      expect(run.code).toBe(0);
      // The old redraw loop wrote megabytes a second; a run's whole output is a few kilobytes.
      expect(Buffer.byteLength(run.stdout)).toBeLessThan(64 * 1024);
      expect(tableLines(run.screen).length).toBeGreaterThan(0);
      for (const line of tableLines(run.screen)) expect(screenWidth(line), line).toBeLessThanOrEqual(80);
    });

    it.each([
      ['companies csv', () => ['companies', '-t', 'Shopify', '--max', '3', '--format', 'csv'], false],
      ['contacts', () => commands.contacts!(), true],
      ['verify', () => commands.verify!(), true],
      ['pipeline', () => commands.pipeline!(), true],
      ['--help', () => ['companies', '--help'], false],
    ])('%s ends the same (in process: the table at 80 columns)', async (_name, args, drawsTable) => {
      const run = await inTerminal(args(), zero);
      expect(run.code, run.stderr).toBe(0);
      expect(Buffer.byteLength(run.stdout) + Buffer.byteLength(run.stderr)).toBeLessThan(64 * 1024);
      const table = tableLines(run.stdout.split('\n'));
      expect(table.length > 0).toBe(drawsTable);
      for (const line of table) expect(screenWidth(line), line).toBeLessThanOrEqual(80);
    });
  });

  describe('a long companies export', () => {
    let server: ScriptedServer;
    /** The second page is answered once this opens (it may open before the request arrives). */
    let secondPageGate = gate();

    beforeAll(async () => {
      const domains = (from: number) => Array.from({ length: 100 }, (_, index) => `shop${from + index}.example`);
      server = await startScriptedServer((request) => {
        // The two pages hold the whole total: a listing short of it is refused (issue 42).
        const meta = { total: 200 };
        if (!request.query.has('cursor'))
          return {
            body: { ...companiesPage(domains(0), 'page-2'), meta: { ...(companiesPage([]).meta as object), ...meta } },
          };
        // The second page waits for the test: the run is mid-export for as long as the test looks.
        return {
          holdUntil: secondPageGate.promise,
          body: { ...companiesPage(domains(100), null), meta: { ...(companiesPage([]).meta as object), ...meta } },
        };
      });
    });
    afterAll(async () => {
      secondPageGate.resolve();
      await server?.close();
    });

    /** Starts the export on a terminal and resolves once the progress line shows `pattern`. */
    async function startUntil(
      pattern: RegExp,
    ): Promise<{ child: ReturnType<typeof startOnTerminal>; output: () => string }> {
      secondPageGate = gate();
      const child = startOnTerminal(
        ['companies', '-t', 'Shopify', '--format', 'csv', '-o', join(dir, `export-${Date.now()}.csv`)],
        { columns: 100, rows: 30 },
        { url: server.url, apiKey: KEY },
      );
      let output = '';
      const seen = new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          output += chunk.toString('utf8');
          if (pattern.test(output)) resolve();
        });
        child.once('close', () => reject(new Error(`ended before showing ${pattern}:\n${output}`)));
      });
      await seen;
      return { child, output: () => output };
    }

    it('shows a bar with done/total, a percentage and an ETA', async () => {
      const { child, output } = await startUntil(/ETA \d/);
      const line = screenLines(output()).find((text) => text.includes('Fetching companies'));
      expect(line).toMatch(/Fetching companies [█░]+ 50% · 100\/200 companies · [\d,]+\/s · ETA \d/);
      secondPageGate.resolve();
      const [code] = (await once(child, 'close')) as [number];
      expect(code).toBe(0);
    });

    it('Ctrl-C leaves no progress line behind', async () => {
      const { child, output } = await startUntil(/ETA \d/);
      child.stdin!.write('\x03');
      const [code] = (await once(child, 'close')) as [number];
      expect(code).toBe(130);
      const screen = screenLines(output());
      expect(screen.filter((line) => line.includes('Fetching companies'))).toEqual([]);
      expect(screen.join('\n')).toContain('prospect: interrupted by SIGINT');
    });
  });
});

/**
 * Issue 26, point 2: an exclusion list saved by Excel (UTF-16 with a BOM, CRLF) removes exactly what
 * its UTF-8 twin removes; a list that yields nothing, or that cannot be read (Windows-1252), stops the
 * run with exit 2 before any call, proved by the sandbox's request counter. The domains input itself
 * is read the same way. Fixture bytes are made here with Buffer; expected rows come from the
 * independent client, never from prospect.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, runInProcess, scratchDir } from '../../helpers/cli.js';
import { csvRecords } from '../../helpers/csv.js';
import { call, contactsOfDomain, qs, sandboxStats } from '../../helpers/independent-client.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../../helpers/sandbox.js';

const KEY = SANDBOX_KEYS.growth;
let sandbox: RunningSandbox;
let domains: string[];
/** Every address of the domains, from the independent client. */
let addresses: string[];
/** Each address's company (a webmail or disposable address is not at its company's domain). */
const companyOf = new Map<string, string>();

beforeAll(async () => {
  sandbox = await startTestSandbox();
  const { body } = await call(
    sandbox.url,
    `/api/v1/companies?${qs({ technology: 'Shopify', country: 'united states', limit: 6 })}`,
    { key: KEY },
  );
  domains = (body.data as Array<{ domain: string }>).map((company) => company.domain);
  const contacts = (await Promise.all(domains.map((domain) => contactsOfDomain(sandbox.url, KEY, domain)))).flat();
  for (const contact of contacts as { business_email?: string | null; domain: string }[])
    if (contact.business_email) companyOf.set(contact.business_email, contact.domain);
  addresses = [...companyOf.keys()];
  expect(addresses.length).toBeGreaterThan(20);
});
afterAll(async () => {
  await sandbox?.close();
});

/** A list as Excel saves it: a header, CRLF, in UTF-8, or as "Unicode Text" (UTF-16 LE with a BOM), or big-endian. */
function excelList(header: string, entries: readonly string[], encoding: 'utf8' | 'utf16le' | 'utf16be'): Buffer {
  const text = `${header}\r\n${entries.join('\r\n')}\r\n`;
  if (encoding === 'utf8') return Buffer.from(text, 'utf8');
  const little = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
  return encoding === 'utf16le' ? little : Buffer.from(little).swap16();
}

const requests = async (): Promise<number> => (await sandboxStats(sandbox.url)).requests.total;

describe('an exclusion list saved as UTF-16 removes exactly what its UTF-8 twin removes', () => {
  it.each([
    [
      '--exclude-emails',
      'Email Address',
      () => addresses.filter((_, i) => i % 3 === 0).map((email) => email.toUpperCase()),
    ],
    ['--exclude-domains', 'Website', () => [`https://www.${domains[1]}/about`, domains[4]!]],
  ])('%s', async (flag, header, entries) => {
    const dir = await scratchDir();
    const outputs: Record<string, string> = {};
    for (const encoding of ['utf8', 'utf16le', 'utf16be'] as const) {
      const list = join(dir, `list-${encoding}.csv`);
      await writeFile(list, excelList(header, entries(), encoding));
      // The UTF-8 run spawned, as a user runs it; its twins run the same main() in process.
      const args = ['contacts', ...domains, flag, list, '--format', 'csv'];
      const run =
        encoding === 'utf8'
          ? await runCli(args, { url: sandbox.url, apiKey: KEY })
          : await runInProcess(args, { url: sandbox.url, apiKey: KEY });
      expect(run.code, run.stderr).toBe(0);
      outputs[encoding] = run.stdout;
    }
    expect(outputs.utf16le).toBe(outputs.utf8);
    expect(outputs.utf16be).toBe(outputs.utf8);
    const rows = csvRecords(outputs.utf8!);
    const excludedEmails = new Set(flag === '--exclude-emails' ? entries().map((email) => email.toLowerCase()) : []);
    const excludedDomains = new Set(flag === '--exclude-domains' ? [domains[1], domains[4]] : []);
    const expected = addresses.filter(
      (email) => !excludedEmails.has(email.toLowerCase()) && !excludedDomains.has(companyOf.get(email)),
    );
    expect(
      rows
        .map((row) => row.business_email)
        .filter(Boolean)
        .sort(),
    ).toEqual([...expected].sort());
  });

  it('the domains input is read the same from a UTF-16 file and from a UTF-16 pipe', async () => {
    const dir = await scratchDir();
    const utf8 = join(dir, 'domains.csv');
    const utf16 = join(dir, 'domains16.csv');
    await writeFile(utf8, excelList('Website', domains, 'utf8'));
    await writeFile(utf16, excelList('Website', domains, 'utf16le'));
    const expected = await runInProcess(
      ['contacts', '--domains-file', utf8, '--domain-column', 'website', '--format', 'csv'],
      { url: sandbox.url, apiKey: KEY },
    );
    const fromFile = await runInProcess(
      ['contacts', '--domains-file', utf16, '--domain-column', 'website', '--format', 'csv'],
      { url: sandbox.url, apiKey: KEY },
    );
    const fromPipe = await runCli(['contacts', '--domain-column', 'website', '--format', 'csv'], {
      url: sandbox.url,
      apiKey: KEY,
      input: excelList('Website', domains, 'utf16be'),
    });
    expect(expected.code, expected.stderr).toBe(0);
    expect(
      csvRecords(expected.stdout)
        .map((row) => row.business_email)
        .filter(Boolean)
        .sort(),
    ).toEqual([...addresses].sort());
    expect(fromFile.stdout).toBe(expected.stdout);
    expect(fromPipe.code, fromPipe.stderr).toBe(0);
    expect(fromPipe.stdout).toBe(expected.stdout);
  });
});

describe('a list that yields nothing, or cannot be read, stops the run with exit 2 before any call', () => {
  const cases: Array<[string, string, Buffer, RegExp]> = [
    [
      'a 0-byte list (a CRM export that failed)',
      '--exclude-emails',
      Buffer.alloc(0),
      /holds no address \(the file is empty\); nothing was sent\./,
    ],
    [
      'a header alone',
      '--exclude-emails',
      excelList('Email', [], 'utf16le'),
      /holds no address \(only a header or blank cells\)/,
    ],
    ['a header alone, domains', '--exclude-domains', Buffer.from('Website\r\n'), /holds no domain/],
    [
      'a row that is no address',
      '--exclude-emails',
      excelList('Email', ['ada@example.com', 'not an address'], 'utf8'),
      /1 row cannot be read as an address \(line 3: "not an address"/,
    ],
    [
      'Windows-1252, as Excel saves "CSV"',
      '--exclude-domains',
      Buffer.from('Website\r\nacme.com\r\nwww.b\xfccher.de\r\n', 'latin1'),
      /line 3 is not UTF-8 text: it looks like Windows-1252 .* "www\.bücher\.de"/,
    ],
  ];
  it.each(cases)('%s', async (name, flag, bytes, message) => {
    const dir = await scratchDir();
    const list = join(dir, 'list.csv');
    const out = join(dir, 'out.csv');
    await writeFile(list, bytes);
    const before = await requests();
    const args = ['pipeline', '-t', 'Shopify', '--max', '3', flag, list, '-o', out];
    // The first case spawned, the others in process.
    const run =
      name === cases[0]![0]
        ? await runCli(args, { url: sandbox.url, apiKey: KEY })
        : await runInProcess(args, { url: sandbox.url, apiKey: KEY });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toContain(list);
    expect(run.stderr.trim().split('\n').length).toBeLessThanOrEqual(2);
    expect(await requests()).toBe(before);
    expect(existsSync(out)).toBe(false);
  });
});

import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Exclusions } from '../../../src/core/shared/exclusion.js';
import type { RunContext } from '../../../src/runtime/context.js';
import { scratchDir } from '../../helpers/cli.js';

/** What Exclusions.load uses of a run's context: the environment (config file) and the reporter. */
async function context(warnings: string[] = []): Promise<RunContext> {
  const config = await scratchDir();
  return {
    env: { PROSPECT_CONFIG_DIR: config },
    reporter: { warn: (line: string) => warnings.push(line), caveat: () => {} },
  } as unknown as RunContext;
}

/** An exclusion list loaded from a file holding `text`. */
async function listOf(text: string, kind: 'domain' | 'email'): Promise<Exclusions> {
  const file = join(await scratchDir(), 'list');
  await writeFile(file, text);
  const flags = kind === 'domain' ? { excludeDomains: [file] } : { excludeEmails: [file] };
  return Exclusions.load(await context(), flags, { domains: true, emails: true });
}

describe('the files a CRM exports, and every shape the input reader reads', () => {
  it.each([
    [
      'a Salesforce export: Website, BOM, CRLF, URLs, capitals',
      '\uFEFFAccount Name,Website\r\nAcme,https://www.ACME.com/about\r\nBeta,beta.io\r\n',
    ],
    [
      'a HubSpot export: Company Domain Name among other columns',
      'Name,Company Domain Name,Owner\nAcme,acme.com,ann\nBeta,WWW.Beta.io,bob\n',
    ],
    ['a single WEBSITE column', 'WEBSITE\nhttp://acme.com\nbeta.io\n'],
    ['a plain list with a comment', '# customers\nacme.com\nhttps://beta.io/\n'],
    ['JSON with a website field', '[{"name":"Acme","website":"https://acme.com"},{"name":"Beta","website":"beta.io"}]'],
    ['what prospect companies writes (JSON)', '{"data":[{"domain":"acme.com"},{"domain":"beta.io"}],"meta":{}}'],
  ])('%s', async (_name, text) => {
    const list = await listOf(text, 'domain');
    expect(list.record().domains?.entries).toBe(2);
    expect(['acme.com', 'beta.io', 'gamma.com'].map((domain) => list.keepsDomain(domain))).toEqual([
      false,
      false,
      true,
    ]);
  });

  it.each([
    ['an Email column in any case', 'First Name,EMAIL\r\nAda,Ada@Example.com\r\n'],
    ['an Email Address column', 'Email Address;Name\nAda@Example.com;Ada\n'],
    ['a plain list', 'Ada@Example.com\n'],
  ])('addresses: %s', async (_name, text) => {
    const list = await listOf(text, 'email');
    expect(list.record().emails?.entries).toBe(1);
    expect(['ada@example.com', 'bob@example.com'].map((email) => list.keepsEmail(email))).toEqual([false, true]);
  });
});

describe('Exclusions: what matches, and what it counts', () => {
  it('a domain matches after the input normalisation (URL, www., case); each row it keeps out counts', async () => {
    const dir = await scratchDir();
    const file = join(dir, 'customers.csv');
    await writeFile(file, 'Website\nhttps://www.Acme.com/\n');
    const exclusions = await Exclusions.load(
      await context(),
      { excludeDomains: [file] },
      { domains: true, emails: true },
    );
    expect(
      ['acme.com', 'ACME.COM', 'www.acme.com', 'https://acme.com/x', 'acme.co', 'notacme.com'].map((domain) =>
        exclusions.keepsDomain(domain),
      ),
    ).toEqual([false, false, false, false, true, true]);
    expect(exclusions.record()).toEqual({
      domains: { files: [file], entries: 1, removed: 4 },
      emails: null,
      suppressed: null,
    });
    expect(exclusions.parameters()).toEqual({ exclude_domains: [file] });
  });

  it('an address matches case-insensitively; a contact without one is kept; files add up and repeat once', async () => {
    const dir = await scratchDir();
    const [first, second] = [join(dir, 'a.csv'), join(dir, 'b.json')];
    await writeFile(first, 'Email\nADA@example.com\n');
    await writeFile(second, '["bob@example.org"]');
    const exclusions = await Exclusions.load(
      await context(),
      { excludeEmails: [first, second, first] },
      { domains: true, emails: true },
    );
    const contacts = [
      { business_email: 'ada@EXAMPLE.com' },
      { business_email: null },
      { business_email: 'Bob@example.org' },
      { business_email: 'cy@example.org' },
    ];
    expect(exclusions.keepContacts(contacts)).toEqual([{ business_email: null }, { business_email: 'cy@example.org' }]);
    expect(exclusions.record().emails).toEqual({ files: [first, second], entries: 2, removed: 2 });
  });

  it('a command without a kind of list ignores it; no list at all is inactive', async () => {
    const exclusions = await Exclusions.load(
      await context(),
      { excludeDomains: ['/nonexistent'] },
      { domains: false, emails: true },
    );
    expect(exclusions.active).toBe(false);
    expect(exclusions.keepsDomain('acme.com')).toBe(true);
    expect(exclusions.record()).toEqual({ domains: null, emails: null, suppressed: null });
  });

  it('a row that cannot be read, a file that yields no entry, or a missing column stops the run (exit 2), naming the file', async () => {
    const dir = await scratchDir();
    const refused = async (name: string, text: string | Buffer, flags: (file: string) => Record<string, string[]>) => {
      const file = join(dir, name);
      await writeFile(file, text);
      const failure = await Exclusions.load(await context(), flags(file), { domains: true, emails: true }).then(
        () => undefined,
        (error: unknown) => error as { exitCode: number; message: string },
      );
      expect(failure?.exitCode, name).toBe(2);
      expect(failure?.message, name).toContain(file);
      return failure!.message;
    };
    const domains = (file: string) => ({ excludeDomains: [file] });
    const emails = (file: string) => ({ excludeEmails: [file] });
    expect(await refused('junk.txt', 'acme.com\nnot a domain\n', domains)).toContain(
      'line 2: "not a domain" is not a domain',
    );
    expect(await refused('empty.csv', '', emails)).toContain('holds no address (the file is empty)');
    expect(await refused('header.csv', 'Email,Name\r\n', emails)).toContain(
      'holds no address (only a header or blank cells)',
    );
    expect(await refused('blank-cells.csv', 'Website,Name\n,Acme\n', domains)).toContain('holds no domain');
    expect(await refused('no-column.json', '[{"name":"Acme"}]', domains)).toMatch(/cannot read/);
    // Windows-1252, as Excel's "CSV" saves on Windows: not read as UTF-8 (it would match nothing).
    expect(await refused('latin.csv', Buffer.from('Website\nwww.b\xfccher.de\n', 'latin1'), domains)).toMatch(
      /line 2 is not UTF-8 text: it looks like Windows-1252/,
    );
    // A second file that yields nothing stops the run as much as a first one.
    const good = join(dir, 'good.txt');
    await writeFile(good, 'acme.com\n');
    expect(await refused('second-empty.txt', '', (file) => ({ excludeDomains: [good, file] }))).toContain(
      'second-empty.txt holds no domain',
    );
  });
});

/**
 * --columns with headers (source:Header) and --preset (src/io/columns.ts, src/io/presets.ts). The
 * spawned-binary test of the documented headers is test/io/crm-output.cli.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { PRESET } from '../../src/options/flags.js';
import { selectColumns, type Column } from '../../src/io/columns.js';
import { PRESET_NAMES } from '../../src/io/presets.js';
import { exitCodeOf } from '../../src/exit-codes.js';

type Row = Record<string, string>;
const column = (name: string): Column<Row> => ({ name, get: (row) => row[name] });
/** The columns of a contacts export that the presets use, plus one they do not. */
const CONTACTS = ['domain', 'first_name', 'last_name', 'title', 'business_email', 'email_freshness'].map(column);
const LEADS = [...CONTACTS, ...['company_name', 'industry', 'country'].map(column)];
const ROW: Row = {
  domain: 'acme.com',
  first_name: 'Ada',
  last_name: 'Lovelace',
  title: 'CEO',
  business_email: 'ada@acme.com',
  email_freshness: 'fresh',
  company_name: 'Acme',
  industry: 'software',
  country: 'france',
};

const headers = (columns: Column<Row>[]) => columns.map((picked) => picked.name);
const cells = (columns: Column<Row>[]) => columns.map((picked) => picked.get(ROW));

describe('--columns source:Header', () => {
  it('renames a column and keeps plain names as they were', () => {
    const picked = selectColumns(CONTACTS, 'business_email:Email,domain');
    expect(headers(picked)).toEqual(['Email', 'domain']);
    expect(cells(picked)).toEqual(['ada@acme.com', 'acme.com']);
  });

  it('takes headers with spaces and slashes, split at the first colon', () => {
    expect(headers(selectColumns(CONTACTS, 'business_email: Work Email ,domain:Web: site/URL'))).toEqual([
      'Work Email',
      'Web: site/URL',
    ]);
  });

  it('refuses two columns under one header, and a bare "source:" without a preset', () => {
    expect(() => selectColumns(CONTACTS, 'domain:Email,business_email:Email')).toThrow(
      /two columns would both be headed "Email"/,
    );
    expect(() => selectColumns(CONTACTS, 'domain:')).toThrow(/only means something with --preset/);
  });
});

describe('--preset', () => {
  it('hubspot: the contact columns a contacts export has, under HubSpot labels', () => {
    expect(headers(selectColumns(CONTACTS, undefined, 'hubspot'))).toEqual([
      'First Name',
      'Last Name',
      'Email',
      'Job Title',
      'Website URL',
    ]);
    expect(cells(selectColumns(CONTACTS, undefined, 'hubspot'))).toEqual([
      'Ada',
      'Lovelace',
      'ada@acme.com',
      'CEO',
      'acme.com',
    ]);
  });

  it('salesforce: with the company fields a pipeline lead carries', () => {
    expect(headers(selectColumns(LEADS, undefined, 'salesforce'))).toEqual([
      'First Name',
      'Last Name',
      'Email',
      'Title',
      'Company',
      'Website',
      'Industry',
      'Country',
    ]);
    expect(cells(selectColumns(LEADS, undefined, 'salesforce'))).toEqual([
      'Ada',
      'Lovelace',
      'ada@acme.com',
      'CEO',
      'Acme',
      'acme.com',
      'software',
      'france',
    ]);
  });

  it('is changed column by column: rename in place, leave out, add at the end', () => {
    const picked = selectColumns(
      LEADS,
      'business_email:Work Email,industry:,email_freshness,domain:Company Domain Name',
      'hubspot',
    );
    expect(headers(picked)).toEqual([
      'First Name',
      'Last Name',
      'Work Email',
      'Job Title',
      'Company Name',
      'Company Domain Name',
      'Country/Region',
      'email_freshness',
    ]);
    expect(cells(picked)).toEqual(['Ada', 'Lovelace', 'ada@acme.com', 'CEO', 'Acme', 'acme.com', 'france', 'fresh']);
  });

  it('an unknown preset or source column is a usage error (exit 2) naming what exists', () => {
    const unknownPreset = (() => {
      try {
        selectColumns(CONTACTS, undefined, 'pipedrive');
      } catch (error) {
        return error;
      }
    })();
    expect(String(unknownPreset)).toMatch(/unknown --preset "pipedrive"/);
    expect(exitCodeOf(unknownPreset)).toBe(2);
    expect(() => selectColumns(CONTACTS, 'phone:Phone Number', 'hubspot')).toThrow(/unknown column "phone"/);
  });
});

describe('--preset help', () => {
  it('names every preset (written out to keep start-up light)', () => {
    for (const name of PRESET_NAMES) expect(PRESET.help).toContain(name);
  });
});

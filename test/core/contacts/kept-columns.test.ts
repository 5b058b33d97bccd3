/**
 * Which input columns `--preset` and `--keep-columns` copy onto contact rows, and from where
 * (src/core/contacts/kept-columns.ts), in process: an input column is found however its header spells
 * it (`Company Name`, `COMPANY_NAME`, `company-name`), and its value is read under that spelling, so a
 * CRM export's headers never give empty company columns.
 */
import { describe, expect, it } from 'vitest';
import { keptColumns, keptOutputColumns, withKeptColumns } from '../../../src/core/contacts/kept-columns.js';
import type { ContactRow } from '../../../src/core/shared/contact-row.js';

const contact = () => ({ first_name: 'Ada', domain: 'a.com' }) as unknown as ContactRow;
const SPELLINGS: ReadonlyArray<Record<'company_name' | 'industry' | 'country' | 'employee_range', string>> = [
  { company_name: 'company_name', industry: 'industry', country: 'country', employee_range: 'employee_range' },
  { company_name: 'Company Name', industry: 'Industry', country: 'Country', employee_range: 'Employee Range' },
  { company_name: 'COMPANY_NAME', industry: 'INDUSTRY', country: ' country ', employee_range: 'employee-range' },
];

describe('--preset copies the company columns, however the input spells them', () => {
  it.for(SPELLINGS)('$company_name, $industry, $country, $employee_range', (spelled) => {
    const header = ['Website', ...Object.values(spelled)];
    const record: Record<string, string> = { Website: 'a.com' };
    for (const [name, inputName] of Object.entries(spelled)) record[inputName] = `${name} of a.com`;
    const kept = keptColumns(header, undefined, true);
    expect(kept).toEqual(Object.entries(spelled).map(([name, inputName]) => ({ name, inputName })));
    const [row] = withKeptColumns([contact()], kept, record);
    const written = keptOutputColumns(kept).map((column) => [column.name, column.get(row!)]);
    expect(Object.fromEntries(written)).toEqual({
      company_name: 'company_name of a.com',
      industry: 'industry of a.com',
      country: 'country of a.com',
      employee_range: 'employee_range of a.com',
    });
  });

  it('a column the input lacks is left out; without a record the values are null', () => {
    const kept = keptColumns(['domain', 'Company Name'], undefined, true);
    expect(kept).toEqual([{ name: 'company_name', inputName: 'Company Name' }]);
    expect(withKeptColumns([contact()], kept, undefined)[0]).toMatchObject({ company_name: null });
  });
});

describe('--keep-columns copies a column by any spelling, under the input’s own name', () => {
  it('Annual Revenue asked as annual_revenue: its value, under the header as the input has it', () => {
    const kept = keptColumns(['domain', 'Annual Revenue'], 'annual_revenue', false);
    expect(kept).toEqual([{ name: 'Annual Revenue', inputName: 'Annual Revenue' }]);
    const [row] = withKeptColumns([contact()], kept, { domain: 'a.com', 'Annual Revenue': '10M' });
    expect(keptOutputColumns(kept)[0]!.get(row!)).toBe('10M');
  });

  it('a column the input does not have, or a contact column, is a usage error', () => {
    expect(() => keptColumns(['domain'], 'revenue', false)).toThrow(/--keep-columns "revenue": the input has no such/);
    expect(() => keptColumns(['domain', 'Title'], 'title', false)).toThrow(/is a contact column already/);
  });
});

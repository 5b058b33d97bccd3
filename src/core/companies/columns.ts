import type { CompanyRow } from '../../api/index.js';
import type { ChangeRow } from '../changes/diff.js';
import { selectColumns, type Column } from '../../io/columns.js';

/** The stable CSV columns of `prospect companies`, documented in the README; order matters. */
export const COMPANY_COLUMNS: ReadonlyArray<Column<CompanyRow>> = [
  { name: 'domain', get: (row) => row.domain },
  { name: 'company_name', get: (row) => row.company_name },
  { name: 'employee_range', get: (row) => row.employee_range },
  { name: 'industry', get: (row) => row.industry },
  { name: 'country', get: (row) => row.country },
  { name: 'crux_rank', get: (row) => row.crux_rank },
  { name: 'phone', get: (row) => row.phone },
  { name: 'linkedin_url', get: (row) => row.linkedin_url },
  { name: 'tech_count', get: (row) => row.tech_count },
  { name: 'technologies', get: (row) => technologyNames(row) },
];

/** A terminal is narrow: the table leaves out the long columns unless --columns asks for them. */
export const COMPANY_TABLE_COLUMNS = ['domain', 'company_name', 'employee_range', 'country', 'crux_rank', 'tech_count'];

/**
 * The names joined once per company: a pipeline writes this cell on every lead of the company, and
 * joining its whole stack again for each lead (with the source column's text, src/core/contacts/rows.ts)
 * was 8% of what a pipeline allocated.
 */
const joinedNames = new WeakMap<readonly { t: string }[], string>();

export function technologyNames(row: Pick<CompanyRow, 'technologies'>): string {
  const technologies = row.technologies ?? [];
  let names = joinedNames.get(technologies);
  if (names === undefined) {
    names = technologies.map((entry) => entry.t).join(';');
    joinedNames.set(technologies, names);
  }
  return names;
}

/** The company's fields a pipeline lead carries beside its contact, in this order. */
export const LEAD_COMPANY_FIELDS = [
  'company_name',
  'employee_range',
  'industry',
  'country',
  'crux_rank',
  'technologies',
] as const;
export const LEAD_COMPANY_COLUMNS = selectColumns(COMPANY_COLUMNS, LEAD_COMPANY_FIELDS.join(','));

/** A row of `companies --changes` (core/changes/diff.ts), read through the company columns it extends. */
const asChange = (row: CompanyRow) => row as ChangeRow;

/** What changed of a company since the last complete snapshot: `companies --changes`, `pipeline --changes` leads. */
export const CHANGE_KIND_COLUMNS: ReadonlyArray<Column<CompanyRow>> = [
  { name: 'change', get: (row) => asChange(row).change },
  { name: 'technologies_added', get: (row) => asChange(row).technologies_added.join(';') },
  { name: 'technologies_removed', get: (row) => asChange(row).technologies_removed.join(';') },
];

/** `companies --changes`: what changed first, the company's columns, then what this state observed of it. */
export const CHANGE_COLUMNS: ReadonlyArray<Column<CompanyRow>> = [
  ...CHANGE_KIND_COLUMNS,
  ...COMPANY_COLUMNS,
  { name: 'first_seen', get: (row) => asChange(row).first_seen },
  { name: 'previous_snapshot', get: (row) => asChange(row).previous_snapshot },
];

export const CHANGE_TABLE_COLUMNS = ['change', 'domain', 'company_name', 'technologies_added', 'technologies_removed'];

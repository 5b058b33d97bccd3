import type { CompanyRow } from '../api/index.js';
import { selectColumns, type Column } from '../io/columns.js';

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

export function technologyNames(row: Pick<CompanyRow, 'technologies'>): string {
  return (row.technologies ?? []).map((entry) => entry.t).join(';');
}

/** The company's fields a pipeline lead carries beside its contact, in this order. */
export const LEAD_COMPANY_FIELDS = ['company_name', 'employee_range', 'industry', 'country', 'crux_rank', 'technologies'] as const;
export const LEAD_COMPANY_COLUMNS = selectColumns(COMPANY_COLUMNS, LEAD_COMPANY_FIELDS.join(','));

import type { CompanyRow } from '../../api/index.js';
import type { Column } from '../../io/columns.js';
import { LEAD_COMPANY_COLUMNS, LEAD_COMPANY_FIELDS } from '../companies/columns.js';
import { CONTACT_COLUMNS, type ContactRow } from '../contacts/rows.js';

/** A pipeline row: the contact, then the company it works for. */
export type LeadRow = ContactRow & { company: CompanyRow };

export const LEAD_COLUMNS: ReadonlyArray<Column<LeadRow>> = [
  ...CONTACT_COLUMNS,
  ...LEAD_COMPANY_COLUMNS.map((column) => ({ name: column.name, get: (row: LeadRow) => column.get(row.company) })),
];

export const LEAD_TABLE_COLUMNS = [
  'domain',
  'company_name',
  'full_name',
  'title',
  'business_email',
  'email_freshness',
  'verification',
];

/** JSON form of a lead: the contact's fields, and the company's listed fields beside them (not its whole record). */
export function leadJson(row: LeadRow): Record<string, unknown> {
  const { company, ...contact } = row;
  return { ...contact, ...Object.fromEntries(LEAD_COMPANY_FIELDS.map((field) => [field, company[field]])) };
}

import type { CompanyRow } from '../../api/index.js';
import type { Column } from '../../io/columns.js';
import { CHANGE_KIND_COLUMNS, LEAD_COMPANY_COLUMNS, LEAD_COMPANY_FIELDS } from '../companies/columns.js';
import { CONTACT_COLUMNS, type ContactRow } from '../contacts/rows.js';

/** A pipeline row: the contact, then the company it works for. */
export type LeadRow = ContactRow & { company: CompanyRow };

/** A company's column, read from the lead's company. */
const ofCompany = (column: Column<CompanyRow>): Column<LeadRow> => ({
  name: column.name,
  get: (row: LeadRow) => column.get(row.company),
});

export const LEAD_COLUMNS: ReadonlyArray<Column<LeadRow>> = [
  ...CONTACT_COLUMNS,
  ...LEAD_COMPANY_COLUMNS.map(ofCompany),
];

/** `pipeline --changes`: every lead also says what changed of its company, after the columns of a plain run. */
export const LEAD_CHANGE_COLUMNS: ReadonlyArray<Column<LeadRow>> = [
  ...LEAD_COLUMNS,
  ...CHANGE_KIND_COLUMNS.map(ofCompany),
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

/** The same on a terminal, with the company's change first. */
export const LEAD_CHANGE_TABLE_COLUMNS = ['change', ...LEAD_TABLE_COLUMNS];

const CHANGE_FIELDS = CHANGE_KIND_COLUMNS.map((column) => column.name);

/** JSON form of a lead: the contact's fields, and the company's listed fields beside them (not its whole record). */
export function leadJson(row: LeadRow): Record<string, unknown> {
  return leadFields(row, LEAD_COMPANY_FIELDS);
}

/** JSON form of a `pipeline --changes` lead: its company's change fields too, as `companies --changes` writes them. */
export function leadChangeJson(row: LeadRow): Record<string, unknown> {
  return leadFields(row, [...LEAD_COMPANY_FIELDS, ...CHANGE_FIELDS]);
}

function leadFields(row: LeadRow, fields: readonly string[]): Record<string, unknown> {
  const { company, ...contact } = row;
  const fieldsOf = company as unknown as Record<string, unknown>;
  return { ...contact, ...Object.fromEntries(fields.map((field) => [field, fieldsOf[field]])) };
}

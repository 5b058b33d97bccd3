/**
 * The company on every contact (issue 36): `companies | contacts` keeps the input's company columns
 * on each of the company's contact rows, so a Salesforce lead has its Company and a list its industry.
 */
import { UsageError } from '../../exit-codes.js';
import type { Column } from '../../io/columns.js';
import { sameColumn } from '../../io/input/columns.js';
import { CONTACT_COLUMNS, type ContactRow } from './rows.js';

/** What --preset copies from a companies export, as pipeline rows carry them: the CRM's company fields. */
const PRESET_COMPANY_COLUMNS = ['company_name', 'industry', 'country', 'employee_range'] as const;

/** An input column copied onto the rows: its name in the output, and its spelling in the input. */
export interface KeptColumn {
  name: string;
  inputName: string;
}

/**
 * The columns to copy: --keep-columns (each must be in the input), and with --preset the company
 * columns the input has. A name that is already a contact column is refused: which would win?
 */
export function keptColumns(header: readonly string[], keep: string | undefined, preset: boolean): KeptColumn[] {
  const kept: KeptColumn[] = [];
  const add = (name: string, inputName: string) => {
    if (!kept.some((column) => column.name === name)) kept.push({ name, inputName });
  };
  if (preset)
    for (const name of PRESET_COMPANY_COLUMNS) {
      const found = header.find((column) => sameColumn(column, name));
      if (found !== undefined) add(name, found);
    }
  for (const name of (keep ?? '').split(',').map((each) => each.trim())) {
    if (name === '') continue;
    const found = header.find((column) => sameColumn(column, name));
    if (found === undefined)
      throw new UsageError(
        `--keep-columns "${name}": the input has no such column.`,
        `Its columns are: ${header.join(', ') || '(none: a plain list of domains)'}.`,
      );
    if (CONTACT_COLUMNS.some((column) => column.name === found || column.name === name))
      throw new UsageError(`--keep-columns "${name}" is a contact column already; keep another.`);
    add(found, found);
  }
  return kept;
}

/** The kept columns as output columns, after the contact's own. */
export function keptOutputColumns(kept: readonly KeptColumn[]): Column<ContactRow>[] {
  return kept.map(({ name }) => ({ name, get: (row) => (row as ContactRow & Record<string, string>)[name] ?? null }));
}

/** Copies the input row's kept columns onto a company's contact rows (top-level fields, as JSON writes them). */
export function withKeptColumns(
  rows: ContactRow[],
  kept: readonly KeptColumn[],
  record: Record<string, string> | undefined,
): ContactRow[] {
  if (kept.length === 0) return rows;
  const values = Object.fromEntries(kept.map(({ name, inputName }) => [name, record?.[inputName] ?? null]));
  return rows.map((row) => Object.assign(row, values));
}

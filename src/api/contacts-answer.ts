/** A contacts answer (contract rows 18a, 19, 25): renamed fields, ISO dates, and the spec's promised fields. */
import type { ContractSettings } from './contract.js';
import { isRecord } from '../util/is-record.js';
import { displaySafe } from '../util/display-safe.js';
import { shorten } from '../util/text.js';
import { answeredWith } from './paging.js';

/** The row with the service's names turned into ours (`contact-fields`), and its date in ISO form. */
export function contactRowOf(raw: unknown, settings: Pick<ContractSettings, 'contactFields' | 'dateFormat'>): unknown {
  if (!isRecord(raw)) return raw;
  // "" where the contract says null (row 19): a field the service does not have, never an address to pay for.
  const row: Record<string, unknown> = Object.fromEntries(
    Object.entries(raw).map(([key, value]) => [key, typeof value === 'string' && value.trim() === '' ? null : value]),
  );
  for (const [ours, theirs] of Object.entries(settings.contactFields)) {
    if (!(theirs in row) || theirs === ours) continue;
    row[ours] = row[theirs];
    delete row[theirs];
  }
  if ('business_email_last_seen' in row)
    row.business_email_last_seen = isoDateOf(row.business_email_last_seen, settings.dateFormat);
  return row;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/i;
const DAY_MONTH_YEAR = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$/;

/** A date as row 25 reads it (ISO, epoch seconds, day or month first per `date-format`), else as sent. */
function isoDateOf(value: unknown, format: ContractSettings['dateFormat']): unknown {
  if (typeof value === 'number' || (typeof value === 'string' && /^\d{9,11}$/.test(value.trim()))) {
    const date = new Date(Number(value) * 1000);
    return Number.isNaN(date.getTime()) ? value : date.toISOString().slice(0, 10);
  }
  if (typeof value !== 'string') return value;
  const text = value.trim();
  if (ISO_DATE.test(text)) return utcDateOf(text);
  const parts = DAY_MONTH_YEAR.exec(text);
  if (parts === null || format === 'iso') return value;
  const [day, month] = format === 'dmy' ? [parts[1]!, parts[2]!] : [parts[2]!, parts[1]!];
  const iso = `${parts[3]}-${month.padStart(2, '0')}-${day.padStart(2, '0')}`;
  const parsed = new Date(`${iso}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(iso) ? iso : value;
}

/** An ISO date-time with a zone names an instant: its UTC date (row 25), not the date written in its zone. */
function utcDateOf(text: string): string {
  if (text.length <= 10 || !/(Z|[+-]\d{2}:?\d{2})$/i.test(text)) return text.slice(0, 10);
  const instant = new Date(text.replace(' ', 'T'));
  return Number.isNaN(instant.getTime()) ? text.slice(0, 10) : instant.toISOString().slice(0, 10);
}

/** Whether a date reads as one: what isoDateOf leaves as ISO text. */
function readsAsDate(value: string): boolean {
  return ISO_DATE.test(value.trim()) && !Number.isNaN(new Date(value.trim().slice(0, 10)).getTime());
}

/** No row with a promised field, or no date that reads as one: thrown, never retried, as the answer would recur. */
export function checkContactsPromises(rows: readonly Record<string, unknown>[], endpoint: string): void {
  if (rows.length === 0) return;
  // The service's own text goes into a message: made safe for a terminal, and kept short.
  const keys = [...new Set(rows.flatMap((row) => Object.keys(row)))]
    .slice(0, 20)
    .map((key) => shorten(displaySafe(key), 40));
  for (const [field, looksLike] of [
    ['business_email', /mail/i],
    ['business_email_last_seen', /seen|date|confirm|verif|updated|_at$/i],
  ] as const) {
    if (rows.some((row) => field in row)) continue;
    // Never the other promised field: a date is no email (`business_email_last_seen` matches /mail/).
    const example = keys.find((key) => looksLike.test(key) && !key.startsWith('business_email')) ?? 'THEIRS';
    throw answeredWith(
      endpoint,
      `contacts without the "${field}" field the specification promises (fields seen: ${keys.join(', ')})`,
      'contact-fields',
      `Set contact-fields to the service's name for it: ${field}=${example} (pairs ours=theirs, separated by ` +
        'commas).',
    );
  }
  const dates = rows
    .map((row) => row.business_email_last_seen)
    .filter((value): value is string => typeof value === 'string' && value.trim() !== '');
  if (dates.length > 0 && !dates.some(readsAsDate)) {
    throw answeredWith(
      endpoint,
      `last-confirmed dates prospect cannot read (such as "${shorten(displaySafe(dates[0]!), 40)}")`,
      'date-format',
      'Set date-format to how the service writes its dates: dmy (day first) or mdy (month first).',
    );
  }
}

/**
 * A horizontal bar chart for the terminal: one line per segment, `label  bar  count  share`, fitted
 * to the width. The bar is the segment's companies against the largest segment's.
 */
import { displaySafeLine } from '../util/display-safe.js';
import { formatCount } from './format-count.js';
import { shorten } from '../util/text.js';

export interface ChartRow {
  label: string;
  companies: number;
  /** undefined: not counted. */
  contacts: number | undefined;
  /** 0 to 1. */
  share: number;
}

/** What a contacts cell says where contacts could not be counted (never a bare blank). */
export const NOT_AVAILABLE = 'n/a';

const MIN_BAR = 8;
const MIN_LABEL = 8;
const MAX_LABEL = 28;

export function percentText(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

export function renderBarChart(rows: readonly ChartRow[], width: number): string {
  if (rows.length === 0) return '';
  const companies = rows.map((row) => `${formatCount(row.companies)} ${row.companies === 1 ? 'company' : 'companies'}`);
  const contacts = rows.map(contactsText);
  const shares = rows.map((row) => percentText(row.share));
  const companiesWidth = Math.max(...companies.map((text) => text.length));
  const contactsWidth = Math.max(...contacts.map((text) => text.length));
  const shareWidth = Math.max(...shares.map((text) => text.length));
  const figures = 2 + companiesWidth + 2 + contactsWidth + 2 + shareWidth;
  // Labels give way first (down to MIN_LABEL), so the bar keeps MIN_BAR columns on a narrow terminal.
  const names = rows.map((row) => displaySafeLine(row.label));
  const longestLabel = Math.min(MAX_LABEL, Math.max(...names.map((name) => name.length)));
  const labelWidth = Math.max(MIN_LABEL, Math.min(longestLabel, width - 1 - figures - 2 - MIN_BAR));
  const labels = distinctLabels(names, labelWidth);
  const barWidth = Math.max(MIN_BAR, width - 1 - figures - 2 - labelWidth);
  const largest = Math.max(...rows.map((row) => row.companies), 1);
  return rows
    .map((row, i) => {
      const bar = barOf(row.companies / largest, barWidth);
      const parts = [
        labels[i]!.padEnd(labelWidth),
        bar.padEnd(barWidth),
        companies[i]!.padStart(companiesWidth),
        contacts[i]!.padStart(contactsWidth),
        shares[i]!.padStart(shareWidth),
      ];
      return `${parts.join('  ')}\n`;
    })
    .join('');
}

/** "1,234 contacts", or "contacts n/a" where they could not be counted. */
export function contactsText(row: ChartRow): string {
  if (row.contacts === undefined) return `contacts ${NOT_AVAILABLE}`;
  return `${formatCount(row.contacts)} ${row.contacts === 1 ? 'contact' : 'contacts'}`;
}

/** Whole blocks, then one eighth-block for the remainder; a segment with a company shows at least a sliver. */
function barOf(fraction: number, width: number): string {
  const eighths = Math.round(fraction * width * 8);
  const full = Math.floor(eighths / 8);
  const partial = eighths % 8;
  const bar = '█'.repeat(full) + (partial > 0 ? String.fromCodePoint(0x2590 - partial) : '');
  return bar === '' && fraction > 0 ? '▏' : bar;
}

/**
 * Labels cut to `max`, each still telling its segment apart: where cutting the end makes two the
 * same ("Google …" five times), those are cut in the middle instead, keeping as much of their
 * ends as it takes ("Goog…Fonts", "Goog…ager").
 */
export function distinctLabels(names: readonly string[], max: number): string[] {
  const labels = names.map((name) => shorten(name, max));
  const clashing = (label: string) => labels.filter((other) => other === label).length > 1;
  const groups = new Map<string, number[]>();
  labels.forEach((label, index) => {
    if (clashing(label)) groups.set(label, [...(groups.get(label) ?? []), index]);
  });
  for (const members of groups.values()) {
    const others = new Set(labels.filter((_, index) => !members.includes(index)));
    for (let tail = 1; tail <= max - 2; tail++) {
      const cut = members.map((index) => middleCut(names[index]!, max, tail));
      if (new Set(cut).size === cut.length && !cut.some((label) => others.has(label))) {
        members.forEach((index, at) => (labels[index] = cut[at]!));
        break;
      }
    }
  }
  return labels;
}

function middleCut(text: string, max: number, tail: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1 - tail).trimEnd()}…${text.slice(-tail)}`;
}

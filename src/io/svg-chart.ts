/**
 * The bar chart as a standalone SVG file (`count --by … -o chart.svg`): plain SVG text, every piece
 * of text escaped, no script, no external reference, so any browser or report tool shows it.
 */
import { formatCount } from '../ui/format-count.js';
import { contactsText, percentText, type ChartRow } from '../ui/bar-chart.js';
import { shorten } from '../util/text.js';

const ROW_HEIGHT = 26;
const TOP = 48;
const LABEL_WIDTH = 190;
const BAR_WIDTH = 330;
/** Room right of the longest bar for its figures. */
const FIGURES_WIDTH = 340;
const WIDTH = LABEL_WIDTH + BAR_WIDTH + FIGURES_WIDTH;
const BAR_COLOUR = '#2f6fdf';

/** Text as XML character data or an attribute value. */
export function escapeXml(text: string): string {
  return text
    .replace(/[&<>"']/g, (char) => `&#${char.codePointAt(0)};`)
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');
}

export function renderSvgChart(rows: readonly ChartRow[], title: string): string {
  const height = TOP + rows.length * ROW_HEIGHT + 16;
  const largest = Math.max(...rows.map((row) => row.companies), 1);
  const lines = rows.map((row, i) => {
    const y = TOP + i * ROW_HEIGHT;
    const barLength = row.companies > 0 ? Math.max(2, Math.round((row.companies / largest) * BAR_WIDTH)) : 0;
    const figures =
      `${formatCount(row.companies)} ${row.companies === 1 ? 'company' : 'companies'} · ` +
      `${contactsText(row)} · ${percentText(row.share)}`;
    return [
      `  <text x="${LABEL_WIDTH - 8}" y="${y + 17}" text-anchor="end">${escapeXml(shorten(row.label, 30))}</text>`,
      `  <rect x="${LABEL_WIDTH}" y="${y + 4}" width="${barLength}" height="${ROW_HEIGHT - 8}" fill="${BAR_COLOUR}"/>`,
      `  <text x="${LABEL_WIDTH + barLength + 6}" y="${y + 17}">${escapeXml(figures)}</text>`,
    ].join('\n');
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ` +
      `${height}" font-family="Helvetica, Arial, sans-serif" font-size="13">`,
    `  <rect width="100%" height="100%" fill="#ffffff"/>`,
    `  <text x="16" y="28" font-size="16" font-weight="bold">${escapeXml(title)}</text>`,
    ...lines,
    '</svg>',
    '',
  ].join('\n');
}

import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { formatDuration } from '../../src/ui/duration.js';
import { fitWidth, progressLine } from '../../src/ui/progress-line.js';
import { terminalSize } from '../../src/ui/terminal-size.js';
import { closingLine, fillRateSentence } from '../../src/ui/closing.js';

describe('progressLine', () => {
  it('shows a bar, the percentage, done/total, the rate and the ETA once the total is known', () => {
    const line = progressLine('Fetching companies', { done: 3_100, total: 10_000, noun: 'companies' }, 2_000, 200);
    expect(line).toBe('Fetching companies ██████░░░░░░░░░░░░░░ 31% · 3,100/10,000 companies · 1,550/s · ETA 4s');
  });

  it('shows the count and the rate without a total', () => {
    expect(progressLine('Fetching companies', { done: 500, noun: 'companies' }, 1_000, 200)).toBe(
      'Fetching companies · 500 companies · 500/s',
    );
  });

  it('says the ETA is unknown before anything is done', () => {
    expect(progressLine('Verifying', { done: 0, total: 10, noun: 'rows' }, 1_000, 200)).toContain('ETA …');
  });

  it('fits the width: the detail goes first, then the rate, then the bar, then it is cut', () => {
    const state = { done: 50, total: 100, noun: 'domains', detail: '1,020 contacts · 12 units spent' };
    const full = progressLine('Fetching contacts', state, 1_000, 500);
    expect(full).toContain('12 units spent');
    expect(progressLine('Fetching contacts', state, 1_000, stringWidth(full) - 1)).not.toContain('units');
    const narrow = progressLine('Fetching contacts', state, 1_000, 40);
    expect(narrow).toBe('Fetching contacts 50% · 50/100 domains …');
    for (const width of [10, 20, 30, 60])
      expect(stringWidth(progressLine('Fetching contacts', state, 1_000, width))).toBeLessThanOrEqual(width);
  });
});

describe('small formats', () => {
  it.each([
    [7, '7s'],
    [125, '2m 05s'],
    [7_300, '2h 01m'],
  ])('formatDuration(%d) is %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  it('fitWidth counts wide characters twice', () => {
    expect(fitWidth('東京東京東京', 7)).toBe('東京東…');
    expect(fitWidth('short', 7)).toBe('short');
  });

  it.each([
    [
      { columns: 0, rows: 0 },
      { columns: 80, rows: 24 },
    ],
    [{}, { columns: 80, rows: 24 }],
    [
      { columns: 1_000_000, rows: 50 },
      { columns: 80, rows: 50 },
    ],
    [
      { columns: 132, rows: 43 },
      { columns: 132, rows: 43 },
    ],
  ])('terminalSize(%j) is %j', (reported, size) => {
    expect(terminalSize(reported)).toEqual(size);
  });

  it.each([
    ['phone', 10.6, 'phone numbers are known for about 1 in 9 companies in this dataset'],
    ['linkedin_url', 25, 'LinkedIn pages are known for about 1 in 4 companies in this dataset'],
    ['description', 0.4, 'descriptions are known for fewer than 1 in 100 companies in this dataset'],
  ])('fill rate of %s at %d%%', (field, percent, sentence) => {
    expect(fillRateSentence(field, percent)).toBe(sentence);
  });

  it('the closing line says what was written, where, and how long it took', () => {
    expect(closingLine({ rows: 1_204, noun: ['company', 'companies'], path: 'shopify.csv' }, true, 3_140)).toBe(
      'Wrote 1,204 companies to shopify.csv in 3.1s.',
    );
    expect(closingLine({ rows: 1, noun: ['lead', 'leads'], path: undefined }, true, 500)).toBe(
      'Wrote 1 lead to the terminal in 0.5s.',
    );
    expect(closingLine({ rows: 2, noun: ['row', 'rows'], path: undefined }, false, 65_000)).toBe(
      'Wrote 2 rows to stdout in 1m 05s.',
    );
  });
});

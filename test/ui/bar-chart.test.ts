import { describe, expect, it } from 'vitest';
import { distinctLabels, renderBarChart } from '../../src/ui/bar-chart.js';

const rows = [
  { label: 'united states', companies: 300, contacts: 20_033, share: 0.5 },
  { label: 'a country with a name longer than the label column', companies: 150, contacts: 1, share: 0.25 },
  { label: 'other', companies: 1, contacts: undefined, share: 0.0017 },
];

describe('renderBarChart', () => {
  it.each([60, 80, 132])('fits %i columns: label, bar, companies, contacts, share on each line', (width) => {
    const lines = renderBarChart(rows, width).trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(width);
    // A label gives way before the bar on a narrow terminal: clipped with an ellipsis, never wrapped.
    expect(lines[0]).toMatch(/^united st?a?t?e?s?…? +█+ +300 companies +20,033 contacts +50\.0%$/);
    expect(lines[1]).toMatch(/^a count[a-z ]*… /);
    expect(lines[1]).toContain('1 contact ');
    // The largest segment has the longest bar; the smallest still shows.
    const bar = (line: string) => (line.match(/[█▉▊▋▌▍▎▏]+/) ?? [''])[0].length;
    expect(bar(lines[0]!)).toBeGreaterThan(bar(lines[1]!));
    expect(bar(lines[2]!)).toBeGreaterThan(0);
    expect(lines[2]).toMatch(/1 company +contacts n\/a +0\.2%$/);
  });

  it('says "contacts n/a" on every line where no segment was counted, never a blank column', () => {
    const lines = renderBarChart(
      [
        { label: 'retail', companies: 7, contacts: undefined, share: 0.7 },
        { label: 'media', companies: 3, contacts: undefined, share: 0.3 },
      ],
      80,
    )
      .trimEnd()
      .split('\n');
    expect(lines.map((line) => line.replace(/[█▉▊▋▌▍▎▏]+/, 'BAR').replace(/ +/g, ' '))).toEqual([
      'retail BAR 7 companies contacts n/a 70.0%',
      'media BAR 3 companies contacts n/a 30.0%',
    ]);
  });
});

describe('labels cut to fit stay distinct (issue 36: five "Google …" at 60 columns)', () => {
  const google = ['Google Analytics', 'Google Tag Manager', 'Google Fonts', 'Google Maps', 'Google Ads', 'Shopify Pay'];
  const chart = google.map((label, index) => ({ label, companies: 900 - index * 100, contacts: 40_000, share: 0.3 }));

  it.each([60, 80])('at %i columns every label differs, and none is wider than its column', (width) => {
    const lines = renderBarChart(chart, width).trimEnd().split('\n');
    const labels = lines.map((line) => line.split(/ {2,}/)[0]!);
    expect(new Set(labels).size).toBe(google.length);
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(width);
  });

  it('cuts the end where that is enough, and the middle only where the ends clash', () => {
    expect(distinctLabels(['Google Analytics', 'Google Fonts', 'Shopify Payments'], 9)).toEqual([
      'Google A…',
      'Google F…',
      'Shopify …',
    ]);
    const cut = distinctLabels(['Google Tag Manager', 'Google Tag Assistant'], 9);
    expect(cut[0]).not.toBe(cut[1]);
    for (const label of cut) expect(label.length).toBeLessThanOrEqual(9);
    expect(cut).toEqual(['Google…r', 'Google…t']);
  });

  it('draws a service label as text: no escape sequence or control reaches the terminal', () => {
    const text = renderBarChart(
      [{ label: 'Acme\u001b]0;owned\u0007\u001b[2J\u202e', companies: 1, contacts: 1, share: 1 }],
      80,
    );
    expect(text).toMatch(/^Acme +/);
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]|owned/);
  });
});

/**
 * Help text wrapped to a terminal stays fit to paste (issue 43): bash itself reads each wrapped
 * example back into the words of the unwrapped one, a comment stays a comment, and a crontab entry,
 * which no ` \` can continue, is never broken.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { wrapHelpText } from '../../src/ui/wrap.js';

/** The words bash makes of a command's lines (its `$ ` dropped), by printing each argument on a line. */
function bashWords(lines: string): string[] {
  const script = `words() { printf '%s\\n' "$@"; }\nwords ${lines.replace(/^\s*\$ /, '')}`;
  const run = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.split('\n').slice(0, -1);
}

const EXAMPLE =
  '  $ prospect pipeline -t Shopify -T Klaviyo --country "united states" --employee-range 11-500 \\\n' +
  '      --seniority cxo,vp --stale verify --verify-budget 500 --state ~/.prospect/shopify --only-new \\\n' +
  "      -o 'leads-2026.csv' --summary run.json";

describe('help examples on a narrow terminal', () => {
  it.each([40, 60, 70, 80])('at %i columns every line fits and bash reads the same words', (width) => {
    const wrapped = wrapHelpText(EXAMPLE, width);
    for (const line of wrapped.split('\n')) expect(line.length, line).toBeLessThanOrEqual(width);
    expect(wrapped.split('\n').length).toBeGreaterThan(3);
    expect(bashWords(wrapped)).toEqual(bashWords(EXAMPLE));
    expect(bashWords(wrapped)).toContain('united states');
  });

  it('a line an example already continues is continued again where it is cut', () => {
    const wrapped = wrapHelpText(EXAMPLE, 70).split('\n');
    // Every line but the last ends in " \": none of the example's own lines is cut bare.
    for (const line of wrapped.slice(0, -1)) expect(line).toMatch(/ \\$/);
    expect(wrapped.at(-1)).not.toMatch(/\\$/);
  });

  it('a comment goes on as comment lines', () => {
    const comment =
      '  # crontab: every Monday at 03:00 (see the README, Scheduled exports); one file a run, never replaced';
    const wrapped = wrapHelpText(comment, 50).split('\n');
    expect(wrapped.length).toBeGreaterThan(1);
    for (const line of wrapped) {
      expect(line).toMatch(/^ {2}# \S/);
      expect(line.length).toBeLessThanOrEqual(50);
    }
    expect(wrapped.map((line) => line.slice(4)).join(' ')).toBe(comment.slice(4));
  });

  it.each([
    '  0 3 * * 1  cd ~/leads && prospect pipeline -t Shopify --state state --only-new -o "weekly-$(date +\\%F).csv"',
    '  */15 9-17 * * 1-5 prospect companies -t Shopify -o /srv/exports/shops.csv --summary /srv/exports/run.json',
    '  @weekly prospect pipeline -t Shopify --seniority cxo,vp --state state --only-new -o weekly.csv --summary w.json',
  ])('a crontab entry is left whole: %s', (entry) => {
    expect(wrapHelpText(entry, 60)).toBe(entry);
  });

  it('prose that is not an example is wrapped at spaces as before', () => {
    const prose = '  a line of prose that is much longer than the terminal it is shown on, so it wraps';
    const wrapped = wrapHelpText(prose, 40).split('\n');
    expect(wrapped.length).toBeGreaterThan(1);
    for (const line of wrapped) expect(line.length).toBeLessThanOrEqual(40);
    expect(wrapped.map((line) => line.trim()).join(' ')).toBe(prose.trim());
  });
});

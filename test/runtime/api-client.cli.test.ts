/**
 * A rate-limit pause is said on a terminal (issue 34, minor: "Rate-limit pauses are silent on a
 * terminal"), once per pause, and nowhere else: a pipe's stderr stays as it was.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { finishCli, runCli } from '../helpers/cli.js';
import { closeScripted, companiesPage, serveScript } from '../helpers/scripted-server.js';
import { SCRIPT, screenLines, startOnTerminal } from '../helpers/terminal.js';

const KEY = 'rate-limit-note-key-0123';
afterEach(closeScripted);

/** Two 429s (Retry-After: 1) before the one page of companies. */
const limited = () =>
  serveScript([
    { status: 429, headers: { 'retry-after': '1' }, body: { error: { code: 'rate_limited', reason: 'slow down' } } },
    { status: 429, headers: { 'retry-after': '1' }, body: { error: { code: 'rate_limited', reason: 'slow down' } } },
    { body: companiesPage(['a.example', 'b.example'], null) },
  ]);

describe("the service's rate limit", () => {
  it.skipIf(SCRIPT.skip)('a terminal is told of each pause', async () => {
    const server = await limited();
    const child = startOnTerminal(
      ['companies', '-t', 'Shopify'],
      { columns: 120, rows: 30 },
      { url: server.url, apiKey: KEY },
    );
    const run = await finishCli(child, { apiKey: KEY });
    expect(run.code, run.stdout).toBe(0);
    const notes = screenLines(run.stdout).filter((line) => line.includes('rate limit was reached (429)'));
    // One line per pause (the pacer decides how long: at least the Retry-After).
    expect(notes).toHaveLength(2);
    for (const note of notes)
      expect(note).toMatch(/^The service's rate limit was reached \(429\): pausing \d+ s, then going on\.$/);
    expect(server.requests).toHaveLength(3);
  });

  it('a pipe hears nothing of it', async () => {
    const server = await limited();
    const run = await runCli(['companies', '-t', 'Shopify'], { url: server.url, apiKey: KEY });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout.split('\n')[1]).toMatch(/^a\.example,/);
  });
});

/**
 * Honest waits (issue 27): a server that accepts the connection and never answers (a black hole).
 * On a terminal the wait is said while it lasts ("waiting for 127.0.0.1:PORT: 3 s…"), well before
 * the read timeout; in a pipe nothing but the failure. Either way the run ends with exit 5 and a
 * line naming the host, the port and the kind of failure, then one saying what to do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runCli } from '../helpers/cli.js';
import { startBlackHole } from '../helpers/real-servers.js';
import { SCRIPT, screenLines, startOnTerminal } from '../helpers/terminal.js';

const KEY = 'black-hole-test-key-0123';
/** Longer than the first notice (3 s, WAIT_NOTICE_AFTER_MS) by far: the notice comes before the timeout by design, not by luck. */
const TIMEOUT_SECONDS = '8';

let blackHole: Awaited<ReturnType<typeof startBlackHole>>;
let port: number;

beforeAll(async () => {
  blackHole = await startBlackHole();
  port = blackHole.port;
});
afterAll(async () => {
  await blackHole?.close();
});

const ARGS = ['--timeout', TIMEOUT_SECONDS, '--max-retries', '0', 'companies', '-t', 'Shopify', '--format', 'csv'];

describe('a black hole (accepts TCP, never answers)', () => {
  // Each case waits out its 8 s --timeout: 60 s of test timeout keeps a busy machine's run well inside it.
  it.skipIf(SCRIPT.skip).concurrent(
    'on a terminal: the wait is shown while it lasts; exit 5 names the host, port and class',
    { timeout: 60_000 },
    async () => {
      const child = startOnTerminal(
        ARGS,
        { columns: 100, rows: 30 },
        { url: `http://127.0.0.1:${port}`, apiKey: KEY, timeoutMs: 60_000 },
      );
      const run = await finishCli(child, { apiKey: KEY, timeoutMs: 60_000 });
      expect(run.code).toBe(5);
      const lines = screenLines(run.stdout).filter((line) => line.trim() !== '');
      const waiting = lines.filter((line) => line.includes(`waiting for 127.0.0.1:${port}: `));
      expect(waiting.length).toBeGreaterThanOrEqual(1);
      expect(waiting[0]).toMatch(new RegExp(`waiting for 127\\.0\\.0\\.1:${port}: [3-5] s…$`));
      // A terminal gets the message wrapped at spaces to its 100 columns: read with the breaks undone.
      expect(lines.join(' ').replace(/\s+/g, ' ')).toContain(
        `prospect: no answer from 127.0.0.1:${port} for /companies after 1 attempt (last: timeout: no complete answer within ${TIMEOUT_SECONDS} s)`,
      );
    },
  );

  it.concurrent(
    'in a pipe: no progress, only what failed (host, port, class) and what to do',
    { timeout: 60_000 },
    async () => {
      const run = await runCli(ARGS, { url: `http://127.0.0.1:${port}`, apiKey: KEY, timeoutMs: 60_000 });
      expect(run.code).toBe(5);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `prospect: no answer from 127.0.0.1:${port} for /companies after 1 attempt (last: timeout: no complete answer within ${TIMEOUT_SECONDS} s)\n` +
          'The service is slow or unreachable: try again later, or give it longer with --timeout SECONDS.\n',
      );
    },
  );
});

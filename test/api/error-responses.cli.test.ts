/**
 * Text from the service is data (issue 27): an error reason carrying escape sequences (one that sets
 * the window title, one that colours a fake line green) reaches stderr as plain text, on a pipe and
 * on a terminal alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runCli } from '../helpers/cli.js';
import { errorBody, startScriptedServer, type ScriptedServer } from '../helpers/scripted-server.js';
import { SCRIPT, startOnTerminal } from '../helpers/terminal.js';

const KEY = 'escape-test-key-012345';
const HOSTILE =
  'bad filter \u001b]0;you have been owned\u0007\u001b[2K\r\u001b[32m✔ Wrote 10,000 leads\u001b[0m\u009b31m';

let server: ScriptedServer;
beforeAll(async () => {
  server = await startScriptedServer([{ status: 400, body: errorBody('invalid_parameter', HOSTILE) }]);
});
afterAll(async () => {
  await server.close();
});

const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('an error reason with escape sequences', () => {
  it('reaches stderr as plain text (pipe)', async () => {
    const run = await runCli(['companies', '-t', 'Shopify'], { url: server.url, apiKey: KEY });
    expect(run.code).toBe(2);
    expect(run.stderr).not.toMatch(CONTROLS);
    expect(run.stderr).toMatch(
      /^prospect: the service rejected the request to \/companies \(400 invalid_parameter\): bad filter +✔ Wrote 10,000 leads\n$/,
    );
  });

  it.skipIf(SCRIPT.skip)('reaches a terminal as plain text', async () => {
    const child = startOnTerminal(
      ['companies', '-t', 'Shopify'],
      { columns: 120, rows: 20 },
      { url: server.url, apiKey: KEY },
    );
    const run = await finishCli(child, { apiKey: KEY });
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/bad filter +✔ Wrote 10,000 leads/);
    expect(run.stdout).not.toContain('\u001b]0;');
    expect(run.stdout).not.toContain('\u001b[32m');
  });
});

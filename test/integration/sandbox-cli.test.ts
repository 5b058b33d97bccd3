/**
 * `prospect sandbox` as a user runs it: the built binary (npm test builds first). The URL is the first
 * stdout line once listening, the keys go to stderr, SIGTERM and SIGINT stop it with exit 0, and a bad
 * flag is one line on stderr with exit 2.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call, SANDBOX_KEYS } from '../helpers/sandbox.js';

const BIN = resolve(import.meta.dirname, '../../bin/prospect.js');

function startSandboxCli(args: string[]): { child: ChildProcess; stderr: () => string; firstLine: Promise<string>; exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, [BIN, 'sandbox', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const firstLine = new Promise<string>((resolveLine, reject) => {
    lines.once('line', resolveLine);
    child.once('exit', (code) => reject(new Error(`exited ${code} before printing a URL; stderr: ${stderr}`)));
  });
  // 'close' rather than 'exit': it fires once the output streams are drained too.
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => child.once('close', (code, signal) => resolveExit({ code, signal })));
  return { child, stderr: () => stderr, firstLine, exit };
}

describe('prospect sandbox (built CLI)', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('prints the URL first, serves, and exits 0 on %s', async (signal) => {
    const started = performance.now();
    const run = startSandboxCli(['--port', '0', '--as-of', '2025-06-30']);
    const url = await run.firstLine;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await call(url, '/api/v1/companies?technology=Shopify&limit=1', { key: SANDBOX_KEYS.growth });
    expect(res.status).toBe(200);
    console.log(`CLI sandbox: first answer ${Math.round(performance.now() - started)} ms after spawn`);
    run.child.kill(signal);
    expect(await run.exit).toEqual({ code: 0, signal: null });
    // Read after exit: stderr may still be in flight while the first answer arrives.
    for (const key of Object.values(SANDBOX_KEYS)) expect(run.stderr()).toContain(key);
  });

  it.each([
    [['--port', 'abc']],
    [['--port', '70000']],
    [['--companies', '0']],
    [['--companies', '1000001']],
    [['--seed', '-1']],
    [['--as-of', '2025-02-30']],
    [['--fail-rate', '1.5']],
    [['--latency', 'slow']],
    [['--rate-limit', '0']],
    [['--host', '0.0.0.0']],
  ])('exits 2 with one line on stderr for %j', async (args) => {
    const run = startSandboxCli(['--port', '0', ...args]);
    run.firstLine.catch(() => undefined);
    const { code } = await run.exit;
    expect(code).toBe(2);
    expect(run.stderr().trim().split('\n')).toHaveLength(1);
  });

  it('listens on a non-loopback address only with --public', async () => {
    const run = startSandboxCli(['--port', '0', '--host', '0.0.0.0', '--public', '--companies', '2000']);
    const url = await run.firstLine;
    expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    run.child.kill('SIGTERM');
    expect((await run.exit).code).toBe(0);
  });
});

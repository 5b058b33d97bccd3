// Helpers for bench/run.js: spawned sandboxes, timed child processes with their peak memory,
// statistics. Plain Node, no dependency. Every server is on loopback and every loop is bounded.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, openSync, closeSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = join(ROOT, 'bin', 'prospect.js');
export const KEY = 'sandbox-growth';

const GNU_TIME = ['/usr/bin/time'].find(
  (path) => existsSync(path) && spawnSync(path, ['-f', '%M', 'true']).status === 0,
);

export function hasCommand(name) {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

// ---------------------------------------------------------------------------------------------
// Statistics

export function summarize(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], n: sorted.length, values };
}

// ---------------------------------------------------------------------------------------------
// Processes

/**
 * Runs a command to its end and measures it: wall time (from spawn to exit, in this process),
 * the peak resident memory of that process alone (GNU time's %M, i.e. its getrusage maxrss; or,
 * without GNU time, the last VmHWM read from /proc while it ran) and, with GNU time, its CPU time.
 * stdout: a file path, 'ignore' or 'capture'. stdin: a file path or undefined.
 */
export async function measure(command, args, { env = {}, stdout = 'ignore', stdin, timeoutMs = 600_000 } = {}) {
  const scratch = mkdtempSync(join(tmpdir(), 'prospect-bench-'));
  const rssFile = join(scratch, 'rss');
  const [file, argv] = GNU_TIME ? [GNU_TIME, ['-f', '%M %U %S', '-o', rssFile, command, ...args]] : [command, args];
  const outFd = stdout !== 'ignore' && stdout !== 'capture' ? openSync(stdout, 'w') : undefined;
  const inFd = stdin ? openSync(stdin, 'r') : undefined;
  const started = process.hrtime.bigint();
  const child = spawn(file, argv, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: [inFd ?? 'ignore', outFd ?? (stdout === 'capture' ? 'pipe' : 'ignore'), 'pipe'],
  });
  let captured = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (text) => (captured += text));
  child.stderr.setEncoding('utf8').on('data', (text) => (stderr = (stderr + text).slice(-4000)));
  let hwm = 0;
  const poll = GNU_TIME
    ? undefined
    : setInterval(() => {
        try {
          const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
          if (match) hwm = Math.max(hwm, Number(match[1]));
        } catch {
          // Gone already.
        }
      }, 20);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise((resolve) => child.on('close', (exitCode, signal) => resolve(exitCode ?? signal)));
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  clearTimeout(timer);
  if (poll) clearInterval(poll);
  if (outFd !== undefined) closeSync(outFd);
  if (inFd !== undefined) closeSync(inFd);
  let rssKb = hwm;
  // CPU time (user + system), the figure that a loaded machine moves least; undefined without GNU time.
  let cpuMs;
  if (GNU_TIME) {
    const [maxRss, user, system] = (existsSync(rssFile) ? readFileSync(rssFile, 'utf8').trim().split('\n').pop() : '')
      .split(' ')
      .map(Number);
    rssKb = maxRss || 0;
    cpuMs = user >= 0 && system >= 0 ? (user + system) * 1000 : undefined;
  }
  rmSync(scratch, { recursive: true, force: true });
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr.trim().slice(-800)}`);
  return { wallMs, rssMb: rssKb / 1024, cpuMs, stdout: captured, stderr };
}

/**
 * `producer | tee teeTo | consumer`: two processes joined by a pipe (through this process, which
 * also copies what passes to `teeTo`), each measured on its own (wall time to its exit, peak RSS
 * as in measure()). The consumer's stdout goes to `stdout`.
 */
export async function measurePipe(
  [producer, producerArgs],
  [consumer, consumerArgs],
  { env = {}, stdout = 'ignore', teeTo, timeoutMs = 3_600_000 } = {},
) {
  if (!GNU_TIME) throw new Error('measurePipe needs GNU time (/usr/bin/time) for each side');
  const scratch = mkdtempSync(join(tmpdir(), 'prospect-bench-'));
  const outFd = stdout !== 'ignore' ? openSync(stdout, 'w') : undefined;
  const spawnTimed = (name, command, args, stdio) => {
    const rssFile = join(scratch, `rss-${name}`);
    const child = spawn(GNU_TIME, ['-f', '%M', '-o', rssFile, command, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio,
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text) => (stderr = (stderr + text).slice(-4000)));
    const ended = new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? signal)));
    return { child, rssFile, ended, stderr: () => stderr };
  };
  const started = process.hrtime.bigint();
  const left = spawnTimed('producer', producer, producerArgs, ['ignore', 'pipe', 'pipe']);
  const right = spawnTimed('consumer', consumer, consumerArgs, ['pipe', outFd ?? 'ignore', 'pipe']);
  right.child.stdin.on('error', () => {});
  left.child.stdout.pipe(right.child.stdin);
  if (teeTo) left.child.stdout.pipe(createWriteStream(teeTo));
  const timer = setTimeout(() => [left, right].forEach((side) => side.child.kill('SIGKILL')), timeoutMs);
  const wall = async (side) => {
    const code = await side.ended;
    return { code, wallMs: Number(process.hrtime.bigint() - started) / 1e6 };
  };
  const [producerEnd, consumerEnd] = await Promise.all([wall(left), wall(right)]);
  clearTimeout(timer);
  if (outFd !== undefined) closeSync(outFd);
  const rssMb = (side) => (Number(readFileSync(side.rssFile, 'utf8').trim().split('\n').pop()) || 0) / 1024;
  const result = {
    producer: { wallMs: producerEnd.wallMs, rssMb: rssMb(left) },
    consumer: { wallMs: consumerEnd.wallMs, rssMb: rssMb(right) },
  };
  rmSync(scratch, { recursive: true, force: true });
  for (const [name, end, side] of [
    ['producer', producerEnd, left],
    ['consumer', consumerEnd, right],
  ]) {
    if (end.code !== 0) throw new Error(`the ${name} exited ${end.code}: ${side.stderr().trim().slice(-800)}`);
  }
  return result;
}

/** Wall time of a short command, spawned synchronously (start-up figures). */
export function timeSync(command, args) {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'ignore' });
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}`);
  return wallMs;
}

export function prospectEnv(url) {
  return { PROSPECT_BASE_URL: url, PROSPECT_API_KEY: KEY, BASE_URL: url, API_KEY: KEY, NO_COLOR: '1' };
}

// ---------------------------------------------------------------------------------------------
// Sandbox

/** `prospect sandbox` in a child process of its own (its CPU is not the measured process's). */
export async function startSandbox({ companies, seed = 1, latencyMs, rateLimit, asOf, timeoutMs = 180_000 }) {
  const args = [BIN, 'sandbox', '--port', '0', '--companies', String(companies), '--seed', String(seed)];
  if (asOf) args.push('--as-of', asOf);
  if (latencyMs) args.push('--latency', String(latencyMs));
  if (rateLimit) args.push('--rate-limit', String(rateLimit));
  const started = Date.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text) => (stderr = (stderr + text).slice(-2000)));
  const url = await new Promise((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(
      () => reject(new Error(`the sandbox did not start in ${timeoutMs} ms: ${stderr}`)),
      timeoutMs,
    );
    child.stdout.setEncoding('utf8').on('data', (text) => {
      buffered += text;
      const newline = buffered.indexOf('\n');
      if (newline !== -1) {
        clearTimeout(timer);
        resolve(buffered.slice(0, newline).trim());
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the sandbox exited ${code}: ${stderr}`));
    });
  });
  child.removeAllListeners('exit');
  return {
    url,
    startupMs: Date.now() - started,
    async stats() {
      return (await this.fullStats()).requests;
    },
    /** The whole of /_sandbox/stats: requests, rows built, units, faults. */
    async fullStats() {
      const response = await fetch(`${url}/_sandbox/stats`);
      return response.json();
    },
    async get(path) {
      const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${KEY}` } });
      return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Records companies pages (the raw bytes, as the service sent them), following next_cursor. */
export async function recordPages(sandbox, technology, count) {
  const pages = [];
  let cursor = null;
  for (let index = 0; index < count; index++) {
    const query = new URLSearchParams({ technology, limit: '1000', ...(cursor ? { cursor } : {}) });
    const { status, bytes } = await sandbox.get(`/api/v1/companies?${query}`);
    if (status !== 200) throw new Error(`recording pages: status ${status}`);
    pages.push(bytes);
    cursor = JSON.parse(bytes.toString('utf8')).next_cursor;
    if (!cursor) break;
  }
  return pages;
}

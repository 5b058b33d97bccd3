/**
 * A cap on answers (issue 34): hostile servers of the test's own, each a few lines of node:http. A
 * gzip bomb (about 1 MB inflating to 1 GiB), a `gzip, gzip` answer and an endless chunked body each
 * end the run in exit 5 after one attempt, with a message that names host:port and the cap, and the
 * run's peak memory (GNU time's "Maximum resident set size") stays under 300 MB.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constants, crc32, createDeflateRaw, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCli, runCli, runInProcess, startCli } from '../helpers/cli.js';
import { findProgram } from '../helpers/programs.js';
import { companiesPage } from '../helpers/scripted-server.js';

const TIME = findProgram('time');
const KEY = 'test-key-answer-cap';
const GIB = 1024 * 1024 * 1024;
const COMPANIES = ['companies', '-t', 'Shopify', '--max', '3', '--format', 'csv', '--debug'];

/**
 * 1 GiB of zeros as one gzip member (about 1 MB). Deflating the gigabyte costs ~2.5 CPU-s; instead
 * 1 MiB of zeros is deflated once after a full flush, which resets the compressor, so every further
 * MiB deflates to the same bytes: the block is repeated, and the trailer's CRC and size are those of
 * the whole gigabyte (a decoder checks both).
 */
async function gzipBomb(): Promise<Buffer> {
  const deflate = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (part: Buffer) => out.push(part));
  const zeros = Buffer.alloc(1024 * 1024);
  const deflated = async () => {
    deflate.write(zeros);
    await new Promise<void>((resolve) => deflate.flush(constants.Z_FULL_FLUSH, () => resolve()));
    return Buffer.concat(out.splice(0));
  };
  const block = await deflated();
  expect((await deflated()).equals(block)).toBe(true);
  deflate.end();
  await new Promise((resolve) => deflate.once('end', resolve));
  const last = Buffer.concat(out.splice(0));
  let crc = 0;
  for (let written = 0; written < GIB; written += zeros.length) crc = crc32(zeros, crc);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE(GIB % 2 ** 32, 4);
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3]);
  return Buffer.concat([header, ...Array<Buffer>(GIB / zeros.length).fill(block), last, trailer]);
}

/** Writes 1 GiB in 1 MiB chunks as fast as the client reads, and stops when it hangs up. */
async function endlessBody(res: ServerResponse): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  for (let sent = 0; sent < GIB && !res.destroyed; sent += chunk.length)
    if (!res.write(chunk)) await drainedOrClosed(res);
  res.end();
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done);
      resolve();
    };
    res.on('drain', done).on('close', done);
  });
}

interface Hostile {
  url: string;
  requests: number;
}

async function serve(answer: (res: ServerResponse) => unknown): Promise<{ server: Server; site: Hostile }> {
  const site: Hostile = { url: '', requests: 0 };
  const server = createServer((_req, res) => {
    site.requests++;
    res.on('error', () => {});
    void answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  site.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { server, site };
}

/** The run under GNU time: its result, its peak RSS in MB and its CPU seconds, time's report taken off stderr. */
async function measured(args: string[], url: string, env: Record<string, string> = {}) {
  const run = await runCli(args, {
    url,
    apiKey: KEY,
    env,
    timeoutMs: 120_000,
    wrap: (argv) => ({ command: TIME.command, args: ['-v', process.execPath, ...argv] }),
  });
  const field = (name: string) => Number(new RegExp(`${name}: ([\\d.]+)`).exec(run.stderr)?.[1]);
  const peakMb = field('Maximum resident set size \\(kbytes\\)') / 1024;
  const cpuSeconds = field('User time \\(seconds\\)') + field('System time \\(seconds\\)');
  const stderr = run.stderr.slice(0, run.stderr.indexOf('\tCommand being timed'));
  return { code: run.code, stderr, peakMb, cpuSeconds };
}

describe.skipIf(TIME.skip)('a cap on answers, against hostile servers', () => {
  const servers: Server[] = [];
  let bomb: Hostile;
  let doubled: Hostile;
  let endless: Hostile;
  let large: Hostile;

  beforeAll(async () => {
    const compressed = await gzipBomb();
    expect(compressed.length).toBeLessThan(2 * 1024 * 1024);
    const twice = gzipSync(compressed);
    const page = Buffer.from(
      JSON.stringify(
        companiesPage(
          Array.from({ length: 3 }, (_, i) => `c${i}.com`),
          null,
        ),
      ),
    );
    // A real page, padded past 1 MiB with spaces JSON allows: fine by default, too large for a cap of 1.
    const padded = Buffer.concat([page.subarray(0, -1), Buffer.alloc(1100 * 1024, 0x20), Buffer.from('}')]);
    const started = await Promise.all([
      serve((res) => res.writeHead(200, { 'content-encoding': 'gzip' }).end(compressed)),
      serve((res) => res.writeHead(200, { 'content-encoding': 'gzip, gzip' }).end(twice)),
      serve(endlessBody),
      serve((res) => res.writeHead(200, { 'content-type': 'application/json' }).end(padded)),
    ]);
    servers.push(...started.map(({ server }) => server));
    [bomb, doubled, endless, large] = started.map(({ site }) => site) as [Hostile, Hostile, Hostile, Hostile];
  }, 120_000);
  afterAll(async () => {
    for (const server of servers) server.closeAllConnections();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });

  const CASES = [
    {
      name: 'a gzip bomb (1 GiB of zeros in about 1 MB)',
      site: () => bomb,
      says: /larger than the cap on answers \(32 MiB, 33554432 bytes\) once decoded from gzip/,
    },
    {
      name: 'an answer in two layers of gzip',
      site: () => doubled,
      says: /2 layers of encoding \(Content-Encoding: gzip, gzip\).*cap on answers \(32 MiB\)/,
    },
    {
      name: 'a 1 GiB chunked body',
      site: () => endless,
      says: /larger than the cap on answers \(32 MiB, 33554432 bytes\)/,
    },
  ];

  it.each(CASES)(
    '$name: exit 5 after one attempt, naming host:port and the cap, under 300 MB',
    async ({ site, says }) => {
      const run = await measured(COMPANIES, site().url);
      const where = site().url.replace('http://', '');
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toMatch(says);
      expect(run.stderr).toContain(where);
      expect(run.stderr).toMatch(/not asked again/);
      if (site() !== doubled)
        expect(run.stderr).toMatch(
          /--max-answer-size MIB, PROSPECT_MAX_ANSWER_SIZE or `prospect config set max-answer-size MIB`/,
        );
      expect(run.stderr.match(/ -> 200 in /g)).toHaveLength(1);
      expect(site().requests).toBe(1);
      site().requests = 0;
      expect(run.peakMb).toBeLessThan(300);
      // CPU time, not wall time: it holds on a loaded machine, and bounds the 10 s the issue allows.
      expect(run.cpuSeconds).toBeLessThan(10);
      console.log(`${where}: peak ${run.peakMb.toFixed(0)} MB, ${run.cpuSeconds.toFixed(2)} s of CPU`);
    },
  );

  /** In process: which cap applies is the settings' doing, and no peak is measured here (the cases above are spawned under time). */
  const run = (args: string[], env: Record<string, string> = {}) =>
    runInProcess(args, { url: large.url, apiKey: KEY, env, timeoutMs: 120_000 });

  it('the setting lowers the cap (--max-answer-size, then PROSPECT_MAX_ANSWER_SIZE), and the default takes the page', async () => {
    const byFlag = await run([...COMPANIES, '--max-answer-size', '1']);
    expect(byFlag.code, byFlag.stderr).toBe(5);
    expect(byFlag.stderr).toMatch(/larger than the cap on answers \(1 MiB, 1048576 bytes\)/);
    expect(byFlag.stderr).toMatch(/raise the cap \(now 1 MiB\)/);
    const byEnv = await run(COMPANIES, { PROSPECT_MAX_ANSWER_SIZE: '1' });
    expect(byEnv.code, byEnv.stderr).toBe(5);
    expect(byEnv.stderr).toMatch(/\(1 MiB, 1048576 bytes\)/);
    const flagWins = await run([...COMPANIES, '--max-answer-size', '2'], { PROSPECT_MAX_ANSWER_SIZE: '1' });
    expect(flagWins.code, flagWins.stderr).toBe(0);
    const byDefault = await run(COMPANIES);
    expect(byDefault.code, byDefault.stderr).toBe(0);
    const refused = await run(COMPANIES, { PROSPECT_MAX_ANSWER_SIZE: '0' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/PROSPECT_MAX_ANSWER_SIZE/);
  });
});

/**
 * Memory bounded by the cap, not by the shape (issue 41): the worst shapes that fit in the default cap,
 * gzipped to a few KB, each refused in exit 5 under 300 MB; and SIGTERM while such answers are read
 * and checked ends the run with 143 (the check is one bounded pass, no multi-second loop).
 */
describe.skipIf(TIME.skip)('shapes within the cap, against hostile servers', () => {
  const MIB = 1024 * 1024;
  const META = JSON.stringify(companiesPage([], null).meta);
  const fill = (item: string, bytes: number) =>
    Array<string>(Math.floor(bytes / (item.length + 1)))
      .fill(item)
      .join(',');
  const SHAPES = [
    { name: '31 MiB of rows of {}', text: () => `{"data":[${fill('{}', 31 * MIB)}],"meta":${META}}` },
    {
      name: '31 MiB of [] in an unknown field',
      text: () => `{"data":[],"junk":[${fill('[]', 31 * MIB)}],"meta":${META}}`,
    },
    {
      // Just within the bounds, the worst there is: ~126,000 values, and a string of 30 Mi characters
      // with one past U+00FF, which V8 holds at two bytes a character, twice while it parses.
      name: '31 MiB: 14 arrays of 9,000 [] and one string of 30 Mi characters, one of them €',
      text: () =>
        `{"data":[],"junk":[${Array<string>(14)
          .fill(`[${fill('[]', 27_000)}]`)
          .join(',')}],` + `"long":"${'x'.repeat(30 * MIB)}€","meta":${META}}`,
      refused: /an unexpected shape/,
    },
  ];

  async function serveGzip(text: string, onSent: () => void = () => {}) {
    const body = gzipSync(text);
    return serve((res) => {
      res.once('finish', onSent);
      res
        .writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', connection: 'close' })
        .end(body);
    });
  }

  it.each(SHAPES)('$name: exit 5 naming host:port and the bound, under 300 MB', async ({ text, refused }) => {
    const { server, site } = await serveGzip(text());
    try {
      const run = await measured([...COMPANIES, '--max-retries', '0'], site.url);
      expect(run.code, run.stderr).toBe(5);
      expect(run.stderr).toContain(site.url.replace('http://', ''));
      expect(run.stderr).toMatch(refused ?? /more than 10000 members in one object or array/);
      expect(run.peakMb).toBeLessThan(300);
      console.log(`shape: peak ${run.peakMb.toFixed(0)} MB, ${run.cpuSeconds.toFixed(2)} s of CPU`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('SIGTERM once such an answer is sent, while it is read, checked or waited on: exit 143', async () => {
    let child: ReturnType<typeof startCli> | undefined;
    const { server, site } = await serveGzip(SHAPES[0]!.text(), () => child?.kill('SIGTERM'));
    try {
      // Retries left, so the run is still reading, checking or waiting to ask again when the signal lands.
      child = startCli(COMPANIES, { url: site.url, apiKey: KEY });
      const run = await finishCli(child, { timeoutMs: 60_000 });
      expect(run.code, run.stderr).toBe(143);
      expect(site.requests).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }, 90_000);
});

/**
 * The input limits (src/io/input/limits.ts) in every format: a line, a CSV record, a JSON document and
 * its nesting, each refused with exit 2 naming the input, the line and the limit, as soon as the limit
 * is passed. Big inputs are generated streams that count what was pulled from them: a refusal that
 * read the whole 500 MB (or held it) would pull it all.
 */
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/exit-codes.js';
import { domainEntries, emailEntries, streamEntries } from '../../../src/io/input/entries.js';
import { INPUT_LIMITS, type InputLimits } from '../../../src/io/input/limits.js';
import type { EntryKind } from '../../../src/io/input/model.js';
import { chunked } from '../../helpers/input.js';

const MB = 1_000_000;

/** `head`, then `total` characters of `fill` in 64 KiB chunks, then `tail`; `pulled` counts what was taken. */
function generated(head: string, fill: string, total: number, tail = '') {
  const counter = { pulled: 0 };
  async function* chunks(): AsyncGenerator<string> {
    counter.pulled += head.length;
    yield head;
    const piece = fill.repeat(Math.ceil(65_536 / fill.length));
    for (let sent = 0; sent < total; sent += piece.length) {
      counter.pulled += piece.length;
      yield piece;
    }
    counter.pulled += tail.length;
    yield tail;
  }
  return { chunks: chunks(), counter };
}

async function read(
  chunks: AsyncIterable<string>,
  kind: EntryKind = 'domain',
  limits?: Partial<InputLimits>,
): Promise<string[]> {
  const collector = kind === 'domain' ? domainEntries() : emailEntries();
  const entries: string[] = [];
  const options = { kind, origin: 'accounts.txt', limits };
  for await (const entry of streamEntries(chunks, options, collector)) entries.push(entry);
  return entries;
}

async function refusal(promise: Promise<unknown>): Promise<{ message: string; exitCode: number; hint?: string }> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error, 'the input was read without a refusal').toBeInstanceOf(Error);
  return error as { message: string; exitCode: number; hint?: string };
}

describe('a line', () => {
  it('a 500 MB single line is refused after the first MiB, naming the file, the line and the limit', async () => {
    const { chunks, counter } = generated('', 'a', 500 * MB);
    const error = await refusal(read(chunks));
    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.message).toBe(
      'accounts.txt line 1: a line longer than 1,048,576 characters, more than prospect reads; nothing more was read.',
    );
    expect(counter.pulled).toBeLessThan(INPUT_LIMITS.lineChars + 2 * 65_536);
  });

  it('a long line after good ones is refused at its own line number, as soon as it passes the limit', async () => {
    const { chunks, counter } = generated('acme.com\n\nbeta.io\n', 'x', 500 * MB);
    const error = await refusal(read(chunks));
    expect(error.message).toMatch(/^accounts\.txt line 4: a line longer than 1,048,576 characters/);
    expect(counter.pulled).toBeLessThan(INPUT_LIMITS.lineChars + 2 * 65_536);
  });

  it('the limit is the line itself: as long as the limit is read, one more is refused, however it is cut', async () => {
    const limits = { lineChars: 12 };
    for (const cuts of [[], [1], [5, 9, 13], [12, 13, 14, 25]]) {
      expect(await read(chunked('acme.com    \nbeta.io\n', cuts), 'domain', limits)).toEqual(['acme.com', 'beta.io']);
      const error = await refusal(read(chunked('acme.com\nbeta.io      .\nc.com\n', cuts), 'domain', limits));
      expect(error.message).toMatch(/^accounts\.txt line 2: a line longer than 12 characters/);
    }
  });

  it('an NDJSON line is a line: refused past the limit', async () => {
    const text = '{"domain":"acme.com"}\n{"domain":"beta.io","note":"' + 'n'.repeat(100) + '"}\n';
    const error = await refusal(read(chunked(text, [30]), 'domain', { lineChars: 50 }));
    expect(error.message).toMatch(/^accounts\.txt line 2: a line longer than 50 characters/);
  });

  it('a first line past the limit that opens with [ is a one-line JSON document, which has its own limit', async () => {
    const document = JSON.stringify([{ domain: 'acme.com', note: 'n'.repeat(200) }, { domain: 'beta.io' }]);
    expect(await read(chunked(document, [7, 70]), 'domain', { lineChars: 50 })).toEqual(['acme.com', 'beta.io']);
    const error = await refusal(read(chunked(document), 'domain', { lineChars: 50, jsonChars: 100 }));
    expect(error.message).toMatch(/^accounts\.txt line 1: a JSON document longer than 100 characters/);
  });
});

describe('a CSV record', () => {
  it('a 500 MB quoted field is refused by csv-parse at max_record_size, after about the first MiB', async () => {
    const { chunks, counter } = generated('name,domain\nAcme,acme.com\n"', 'x', 500 * MB, '",b.com\n');
    const error = await refusal(read(chunks));
    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.message).toBe(
      'accounts.txt line 3: a CSV record longer than 1,048,576 bytes, more than prospect reads; nothing more was read.',
    );
    expect(counter.pulled).toBeLessThan(INPUT_LIMITS.csvRecordBytes + 2 * 65_536);
  });

  it('a record (quoted line breaks and all) at the limit is read; a longer one is refused', async () => {
    // csv-parse counts the bytes of a record's cells: `"ab\ncd.com"` is 9, its line break included. It
    // checks a cell before it adds a byte to it, so the byte after the limit is the one refused.
    const text = (cell: string) => `domain\nacme.com\n"${cell}"\nbeta.io\n`;
    const limits = { csvRecordBytes: 9 };
    expect(await read(chunked(text('ab\ncd.com'), [20]), 'domain', limits)).toEqual(['acme.com', 'beta.io']);
    const error = await refusal(read(chunked(text('ab\ncdef.com'), [20]), 'domain', limits));
    expect(error.message).toMatch(/^accounts\.txt line 3: a CSV record longer than 9 bytes/);
  });
});

describe('JSON nesting', () => {
  const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('a field nested 10^5 deep in NDJSON is exit 2 on its line, not an internal error', async () => {
    const text = `{"business_email":"a@acme.com"}\n{"business_email":"b@acme.com","x":${deep(100_000)}}\n`;
    const error = await refusal(read(chunked(text, [40]), 'email', { lineChars: 10 * MB }));
    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.message).toBe(
      'accounts.txt line 2: JSON nested more than 64 arrays or objects deep, more than prospect reads; nothing more was read.',
    );
  });

  it('a JSON document nested 10^5 deep is refused on the line where it passes the limit', async () => {
    const text = `[\n  {"business_email": "a@acme.com"},\n  {"x": ${deep(100_000)}}\n]\n`;
    const error = await refusal(read(chunked(text, [3, 50]), 'email', { lineChars: 10 * MB }));
    expect(error.message).toMatch(/^accounts\.txt line 3: JSON nested more than 64 arrays or objects deep/);
  });

  it('the limit counts arrays and objects, not brackets inside strings', async () => {
    const limits = { jsonDepth: 3 };
    const inString = '{"business_email":"a@acme.com","note":"[[[[{{{{"}\n';
    expect(await read(chunked(`${inString}{"business_email":"b@acme.com","x":[[1]]}\n`), 'email', limits)).toEqual([
      'a@acme.com',
      'b@acme.com',
    ]);
    const error = await refusal(read(chunked('{"business_email":"b@acme.com","x":[[[1]]]}\n'), 'email', limits));
    expect(error.message).toMatch(/line 1: JSON nested more than 3 arrays or objects deep/);
    const escaped = '[{"business_email":"a@acme.com","note":"\\"[[[["}]';
    expect(await read(chunked(escaped, [41]), 'email', limits)).toEqual(['a@acme.com']);
  });

  it('a JSON document longer than its limit is refused once it passes it, before it is parsed', async () => {
    const { chunks, counter } = generated('[{"domain": "acme.com", "note": "', 'x', 500 * MB, '"}]');
    const error = await refusal(read(chunks, 'domain', { jsonChars: 4 * MB }));
    expect(error.message).toMatch(/^accounts\.txt line 1: a JSON document longer than 4,000,000 characters/);
    expect(error.hint).toMatch(/NDJSON/);
    expect(counter.pulled).toBeLessThan(4 * MB + 2 * 65_536);
  });
});

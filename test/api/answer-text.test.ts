/**
 * An answer's bytes as text (issue 34): the charset a Content-Type declares is decoded as declared,
 * a byte-order mark is no reason to refuse JSON, and bytes that are no characters are refused with a
 * reason, never written as U+FFFD. A key with a character past ASCII is refused before any call, and
 * an answer nested deeper than any page is refused before anything walks it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { answerText } from '../../src/api/answer-text.js';
import { jsonBoundsOf, jsonShapeProblem, MAX_JSON_DEPTH } from '../../src/api/body-check.js';
import { ClientOptionError, createClient, MalformedResponseError } from '../../src/api/index.js';
import { companiesPage } from '../helpers/scripted-server.js';

const KEY = 'test-key-answer-text';
let server: Server | undefined;
let requests = 0;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  requests = 0;
});

async function serve(body: Buffer, contentType: string): Promise<string> {
  server = createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'content-type': contentType, 'content-length': body.length }).end(body);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function firstPage(url: string) {
  const client = createClient({ baseUrl: url, apiKey: KEY, maxRetries: 0 });
  try {
    for await (const page of client.companies({ technology: 'Shopify' })) return page;
    return undefined;
  } finally {
    await client.close();
  }
}

const pageWith = (name: string) =>
  JSON.stringify(companiesPage(['a.com'], null)).replace('"company_name":"', `"company_name":"${name}`);

describe('the charset of an answer', () => {
  it('a UTF-8 byte-order mark before the JSON is read past', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(pageWith('Zürich '), 'utf8')]);
    const page = await firstPage(await serve(body, 'application/json'));
    expect(page?.data[0]?.company_name).toMatch(/^Zürich /);
  });

  it('charset=ISO-8859-1 is decoded as Latin-1: ü stays ü, not U+FFFD', async () => {
    const body = Buffer.from(pageWith('Zürich '), 'latin1');
    expect(body.includes(0xfc)).toBe(true);
    const page = await firstPage(await serve(body, 'application/json; charset=ISO-8859-1'));
    expect(page?.data[0]?.company_name).toMatch(/^Zürich /);
  });

  it('bytes that are not UTF-8 are refused, naming why, and nothing is written as U+FFFD', async () => {
    const body = Buffer.from(pageWith('Z\u00fcrich '), 'latin1');
    const error = await firstPage(await serve(body, 'application/json')).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect((error as Error).message).toMatch(
      /an answer that is not valid utf-8 \(a byte no character has\) \(status 200\)/,
    );
  });

  it('chunks are decoded as one text, a character split between two kept whole, and let go once decoded', () => {
    const bytes = Buffer.from('\uFEFF{"name":"Z\u00fcrich \u{1F600}"}');
    const chunks = Array.from({ length: bytes.length }, (_, at) => bytes.subarray(at, at + 1));
    expect(answerText(chunks, {})).toEqual({ ok: true, text: '{"name":"Z\u00fcrich \u{1F600}"}' });
    expect(chunks).toEqual([]);
    const cut = [Buffer.from('{"a":"'), Buffer.from([0xc3])];
    expect(answerText(cut, {})).toMatchObject({ ok: false, problem: expect.stringMatching(/not valid utf-8/) });
  });

  it('a charset nobody knows is refused by name', () => {
    const refused = answerText([Buffer.from('{}')], { 'content-type': 'application/json; charset="x-martian"' });
    expect(refused).toEqual({
      ok: false,
      problem: 'an answer in a character set prospect does not know (charset=x-martian)',
    });
    // The parameter is read in any case; without one, the answer is UTF-8.
    const latin1 = { 'content-type': 'text/json;Charset=ISO-8859-1' };
    expect(answerText([Buffer.from([0xe9])], latin1)).toEqual({ ok: true, text: '\u00e9' });
    expect(answerText([Buffer.from('\u00e9')], { 'content-type': 'application/json' })).toEqual({
      ok: true,
      text: '\u00e9',
    });
  });
});

describe('how deep an answer nests', () => {
  it('counts brackets outside strings only', () => {
    const bounds = { depth: 3, members: 10, values: 100 };
    expect(jsonShapeProblem('{"a":[{"b":"[[[{{{"}]}', bounds)).toBeUndefined();
    expect(jsonShapeProblem('{"a":[{"b":[]}]}', bounds)).toBe('JSON nested deeper than 3 levels');
    expect(jsonShapeProblem('"\\"[[[["', bounds)).toBeUndefined();
    expect(jsonShapeProblem(JSON.stringify(companiesPage(['a.com'], null)), jsonBoundsOf(1024 * 1024))).toBeUndefined();
  });

  it('a 200,000-deep extra field is refused as malformed before it is parsed or written', async () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    const body = Buffer.from(pageWith('Deep ').replace('"domain":', `"extra":${deep},"domain":`));
    const error = await firstPage(await serve(body, 'application/json')).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect((error as Error).message).toContain(`JSON nested deeper than ${MAX_JSON_DEPTH} levels (status 200)`);
  });
});

describe('the key', () => {
  it('a character past ASCII is refused before any call (a usage error), its position said, the key not shown', () => {
    let thrown: unknown;
    try {
      createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'abc\u201ddef-key' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ClientOptionError);
    expect((thrown as Error).message).toBe('the API key contains a character that is not plain ASCII (character 4)');
    expect((thrown as Error).message).not.toContain('def-key');
    expect(requests).toBe(0);
  });
});

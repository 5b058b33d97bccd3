/**
 * Memory bounded by the cap, not by the shape (issue 41): each hostile shape within the cap, served by a
 * scripted server on loopback, is a malformed answer refused before JSON.parse builds it (or before zod
 * counts millions of problems), and the message names host:port and the bound it broke.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MalformedResponseError } from '../../src/api/index.js';
import { MAX_CURSOR_LENGTH } from '../../src/api/limits.js';
import { MAX_UNKNOWN_FIELD_WEIGHT, weightOf } from '../../src/api/schema-bounds.js';
import {
  clientOf,
  closeScripted,
  companiesPage,
  failure,
  SAMPLE_COMPANIES_META,
  serveScript,
} from '../helpers/scripted-server.js';

afterEach(closeScripted);

/** The error of a companies listing of one scripted answer (a string body sent as is). */
async function listingError(body: string | object): Promise<{ error: Error; where: string }> {
  const server = await serveScript([{ body, headers: { 'content-type': 'application/json' } }]);
  const client = clientOf(server, { apiKey: 'test-key-123456', maxRetries: 0 });
  const error = await failure(
    (async () => {
      for await (const page of client.companies({ technology: 'Shopify' })) void page;
    })(),
  );
  return { error, where: `127.0.0.1:${server.port}` };
}

const META = JSON.stringify(SAMPLE_COMPANIES_META);
const repeat = (item: string, count: number) => Array<string>(count).fill(item).join(',');

describe('hostile shapes within the cap', () => {
  it('rows of {}: refused by the members bound, not after millions of problems', async () => {
    const { error, where } = await listingError(`{"data":[${repeat('{}', 200_000)}],"meta":${META}}`);
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(error.message).toContain(where);
    expect(error.message).toMatch(/more than 10000 members in one object or array \(status 200\)/);
  });

  it('a few thousand rows of {}: the problems said are the first, and not counted', async () => {
    const { error } = await listingError(`{"data":[${repeat('{}', 5000)}],"meta":${META}}`);
    expect(error.message).toMatch(
      /data\[0\]\.domain: Invalid input: expected string, received undefined \(and more problems\)/,
    );
    expect(error.message).not.toMatch(/\d+ more problem/);
  });

  it('10^6 keys in field_fill_rates: refused by the members bound', async () => {
    const rates = Array.from({ length: 1_000_000 }, (_, i) => `"k${i}":1`).join(',');
    const page = JSON.stringify(companiesPage(['a.com'], null)).replace(
      /"field_fill_rates":\{[^}]*\}/,
      `"field_fill_rates":{${rates}}`,
    );
    const { error, where } = await listingError(page);
    expect(error.message).toContain(where);
    expect(error.message).toMatch(/more than 10000 members in one object or array/);
  });

  it('deep nesting: refused past 64 levels', async () => {
    const deep = `${'['.repeat(65)}${']'.repeat(65)}`;
    const { error, where } = await listingError(
      JSON.stringify(companiesPage(['a.com'], null)).replace('"scope":', `"extra":${deep},"scope":`),
    );
    expect(error.message).toContain(where);
    expect(error.message).toMatch(/JSON nested deeper than 64 levels \(status 200\)/);
  });

  it('an unknown field of many small arrays: refused by the values bound of the cap', async () => {
    // 9,000 arrays of 9,000 elements: every container within the members bound, 81 million values in all.
    const inner = `[${repeat('0', 9000)}]`;
    const { error, where } = await listingError(`{"data":[],"junk":[${repeat(inner, 200)}],"meta":${META}}`);
    expect(error.message).toContain(where);
    expect(error.message).toMatch(/more than 262144 values in one answer/);
  });

  it('an unknown field larger than prospect passes through is refused; one under the bound is kept', async () => {
    const big = 'x'.repeat(MAX_UNKNOWN_FIELD_WEIGHT);
    const page = companiesPage(['a.com'], null) as { data: Record<string, unknown>[] };
    page.data[0] = { ...page.data[0], blob: big };
    const { error, where } = await listingError(page);
    expect(error.message).toContain(where);
    expect(error.message).toMatch(
      /data\[0\]\.blob: an unknown field larger than prospect passes through \(65536 values and characters\)/,
    );
    expect(weightOf(big.slice(1), MAX_UNKNOWN_FIELD_WEIGHT)).toBe(MAX_UNKNOWN_FIELD_WEIGHT);
    expect(weightOf({ ab: [1, 'xy'] }, 100)).toBe(1 + 2 + 1 + 1 + 3);
  });

  it('a cursor past the bound is a broken answer, named', async () => {
    const { error, where } = await listingError(companiesPage(['a.com'], 'c'.repeat(MAX_CURSOR_LENGTH + 1)));
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(error.message).toContain(where);
    expect(error.message).toMatch(/next_cursor: Too big: expected string to have <=4096 characters/);
  });

  it('a cursor that grows each page stops at the bound, after as many requests as it takes to get there', async () => {
    const server = await serveScript((_request, index) => ({
      body: companiesPage([`c${index}.com`], 'c'.repeat(1000 * (index + 1))),
    }));
    const client = clientOf(server, { apiKey: 'test-key-123456', maxRetries: 0 });
    const rows: string[] = [];
    const error = await failure(
      (async () => {
        for await (const page of client.companies({ technology: 'Shopify' }))
          rows.push(...page.data.map((row) => row.domain));
      })(),
    );
    expect(error.message).toMatch(/next_cursor: Too big/);
    expect(server.requests).toHaveLength(5);
    expect(Math.max(...server.requests.map((request) => request.url.length))).toBeLessThan(MAX_CURSOR_LENGTH + 200);
  });
});

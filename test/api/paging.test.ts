/**
 * A listing walked page by page (contract rows 1a, 1b): the guards of a walk, and the next page in a Link
 * header (RFC 8288) in the forms real services send, read by the one function the client and doctor share.
 */
import { describe, expect, it } from 'vitest';
import { MalformedResponseError } from '../../src/api/errors.js';
import { nextLink, textCursor, walkCursor, type FetchedPage } from '../../src/api/paging.js';

/** A fake listing: the page fetched with cursor X is pages[X ?? 'first']. */
function listing(pages: Record<string, { items: number[]; next?: string | null }>) {
  const asked: Array<string | null> = [];
  const fetchPage = async (cursor: string | null): Promise<FetchedPage<number[]>> => {
    asked.push(cursor);
    const page = pages[cursor ?? 'first'];
    if (!page) throw new Error(`no page for ${cursor}`);
    return { page: page.items, itemCount: page.items.length, nextCursor: page.next };
  };
  return { asked, fetchPage };
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe('walkCursor', () => {
  it.each([null, undefined, ''])('follows next_cursor until it is %o', async (end) => {
    const { asked, fetchPage } = listing({
      first: { items: [1], next: 'a' },
      a: { items: [2], next: 'b' },
      b: { items: [3], next: end },
    });
    const pages = await collect(walkCursor({ endpoint: '/companies', forbidEmptyFirstPage: true, fetchPage }));
    expect(pages).toEqual([
      { page: [1], cursor: null, nextCursor: 'a' },
      { page: [2], cursor: 'a', nextCursor: 'b' },
      { page: [3], cursor: 'b', nextCursor: null },
    ]);
    expect(asked).toEqual([null, 'a', 'b']);
  });

  it('detects a cursor loop', async () => {
    const { fetchPage } = listing({
      first: { items: [1], next: 'a' },
      a: { items: [2], next: 'b' },
      b: { items: [3], next: 'a' },
    });
    const pages: unknown[] = [];
    await expect(async () => {
      for await (const page of walkCursor({ endpoint: '/companies', forbidEmptyFirstPage: true, fetchPage }))
        pages.push(page);
    }).rejects.toThrow(
      'the service returned the same cursor twice while listing /companies (page 3); stopping instead of looping',
    );
    expect(pages).toHaveLength(2);
  });

  it('detects a page pointing at itself, and a loop back to the start cursor', async () => {
    const self = listing({ first: { items: [1], next: 'a' }, a: { items: [2], next: 'a' } });
    await expect(
      collect(walkCursor({ endpoint: '/x', forbidEmptyFirstPage: false, fetchPage: self.fetchPage })),
    ).rejects.toThrow(/same cursor twice/);
    const back = listing({ s: { items: [1], next: 't' }, t: { items: [2], next: 's' } });
    await expect(
      collect(walkCursor({ endpoint: '/x', startCursor: 's', forbidEmptyFirstPage: false, fetchPage: back.fetchPage })),
    ).rejects.toThrow(/same cursor twice/);
  });

  it('refuses an empty first page where the contract forbids it', async () => {
    const { fetchPage } = listing({ first: { items: [], next: null } });
    const walk = walkCursor({ endpoint: '/companies', forbidEmptyFirstPage: true, fetchPage });
    await expect(collect(walk)).rejects.toThrow(MalformedResponseError);
    await expect(
      collect(walkCursor({ endpoint: '/companies', forbidEmptyFirstPage: true, fetchPage })),
    ).rejects.toThrow('the service returned an empty first page for /companies instead of a 422');
    await expect(
      collect(walkCursor({ endpoint: '/contacts', forbidEmptyFirstPage: false, fetchPage })),
    ).resolves.toHaveLength(1);
  });

  it('accepts empty later pages, and an empty page when resuming from a cursor', async () => {
    const { fetchPage } = listing({ first: { items: [1], next: 'a' }, a: { items: [], next: 'b' }, b: { items: [2] } });
    expect(await collect(walkCursor({ endpoint: '/companies', forbidEmptyFirstPage: true, fetchPage }))).toHaveLength(
      3,
    );
    const resumed = listing({ z: { items: [], next: null } });
    const pages = await collect(
      walkCursor({
        endpoint: '/companies',
        startCursor: 'z',
        forbidEmptyFirstPage: true,
        fetchPage: resumed.fetchPage,
      }),
    );
    expect(pages).toEqual([{ page: [], cursor: 'z', nextCursor: null }]);
  });

  it('textCursor: absent, null and "" are the last page; a number is its digits', () => {
    expect([undefined, null, '', 'x', 5, Number.NaN, { page: 5 }].map(textCursor)).toEqual([
      null,
      null,
      null,
      'x',
      '5',
      null,
      null,
    ]);
  });
});

const NEXT = 'https://api.example.com/api/v1/companies?technology=Shopify&cursor=abc';

describe('nextLink', () => {
  it.each([
    ['GitHub', `<${NEXT}>; rel="next", <https://api.example.com/x?page=9>; rel="last"`],
    ['after another link', `<https://api.example.com/x?page=1>; rel="first", <${NEXT}>; rel="next"`],
    ['a rel list', `<${NEXT}>; rel="next nofollow"`],
    ['rel unquoted, in capitals', `<${NEXT}>; REL=next`],
    ['a quoted comma before rel', `<https://e.example/p>; rel="prev", <${NEXT}>; title="Page 2, and on"; rel="next"`],
    ['a header given twice', [`<https://e.example/p>; rel="prev"`, `<${NEXT}>; rel="next"`]],
  ])('%s', (_form, header) => {
    expect(nextLink(header)).toBe(NEXT);
  });

  it.each([
    ['no header', undefined],
    ['only prev and last', '<https://e.example/p>; rel="prev", <https://e.example/l>; rel="last"'],
    ['"next" only in a title', '<https://e.example/l>; title="next"; rel="last"'],
    ['a rel that merely contains next', '<https://e.example/l>; rel="nextpage"'],
  ])('none: %s', (_form, header) => {
    expect(nextLink(header)).toBeNull();
  });
});

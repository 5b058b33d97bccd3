/**
 * The next page in a Link header (RFC 8288, contract row 1b): the forms real services send, read by
 * the one function the client and doctor share.
 */
import { describe, expect, it } from 'vitest';
import { nextLink } from '../../src/api/paging.js';

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

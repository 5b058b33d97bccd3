import { describe, expect, it } from 'vitest';
import { buildUrl } from '../../src/api/request-loop.js';

describe('buildUrl', () => {
  const base = new URL('http://127.0.0.1:4010/');

  it('appends /api/v1 and the endpoint, and percent-encodes the query', () => {
    expect(
      buildUrl(base, '/companies', [
        ['technology', 'Shopify'],
        ['country', 'united states'],
        ['not_technology', undefined],
        ['x', 'a&b=c+d/é'],
      ]),
    ).toBe(
      'http://127.0.0.1:4010/api/v1/companies?technology=Shopify&country=united%20states&x=a%26b%3Dc%2Bd%2F%C3%A9',
    );
  });

  it('keeps a path prefix and tolerates one that already ends in /api/v1', () => {
    expect(buildUrl(new URL('https://h.example/proxy//'), '/verify', [])).toBe('https://h.example/proxy/api/v1/verify');
    expect(buildUrl(new URL('https://h.example/api/v1/'), '/verify', [])).toBe('https://h.example/api/v1/verify');
  });
});

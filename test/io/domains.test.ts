import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DomainReason,
  MAX_DOMAIN_LENGTH,
  normalizeDomain,
  normalizeHostname,
  type DomainResult,
} from '../../src/io/domains.js';

const VALID_DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

function domainOf(input: string): string | undefined {
  const result = normalizeDomain(input);
  return result.ok ? result.domain : undefined;
}

function reasonOf(input: string): string | undefined {
  const result = normalizeDomain(input);
  return result.ok ? undefined : result.reason;
}

/** What the recovery property expects: the domain without its leading `www.` labels. */
function withoutWww(domain: string): string {
  let result = domain;
  while (result.startsWith('www.') && result.indexOf('.', 4) !== -1) result = result.slice(4);
  return result;
}

function checkShapeAndIdempotence(input: string): void {
  let result: DomainResult | undefined;
  expect(() => {
    result = normalizeDomain(input);
  }).not.toThrow();
  if (result === undefined) return;
  if (result.ok) {
    expect(result.domain).toMatch(VALID_DOMAIN);
    expect(normalizeDomain(result.domain)).toEqual(result);
  } else {
    expect(result.reason).toMatch(/^\S/);
    expect(result.reason.length).toBeLessThan(80);
  }
}

describe('normalizeDomain: messy input users paste', () => {
  it.each([
    ['https://www.Acme.com/about', 'acme.com'],
    ['HTTP://WWW.EXAMPLE.CO.UK:8080/path?q=1#x', 'example.co.uk'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['BÜCHER.DE', 'xn--bcher-kva.de'],
    ['www.bücher.de', 'xn--bcher-kva.de'],
    ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['acme.com.', 'acme.com'],
    ['  acme.com  ', 'acme.com'],
    ['acme.com:443', 'acme.com'],
    ['acme.com/pricing', 'acme.com'],
    ['acme.com?ref=x', 'acme.com'],
    ['acme.com#top', 'acme.com'],
    ['//cdn.acme.com/lib.js', 'cdn.acme.com'],
    ['ftp://files.acme.com', 'files.acme.com'],
    ['https://user:secret@acme.com:8443/x', 'acme.com'],
    ['http:/acme.com', 'acme.com'],
    ['https:acme.com', 'acme.com'],
    ['https//acme.com', 'acme.com'],
    ['www.www.acme.com', 'acme.com'],
    ['www2.acme.com', 'www2.acme.com'],
    ['www.com', 'www.com'],
    ['ｗｗｗ．ａｃｍｅ．ｃｏｍ', 'acme.com'],
    ['日本.jp', 'xn--wgv71a.jp'],
    ['sub-domain.acme-corp.io', 'sub-domain.acme-corp.io'],
  ])('%s -> %s', (input, expected) => {
    expect(normalizeDomain(input)).toEqual({ ok: true, domain: expected });
  });

  it.each([
    ['', DomainReason.empty],
    ['   ', DomainReason.empty],
    ['http//foo', 'no dot'],
    ['localhost', 'no dot'],
    ['bob@acme.com', DomainReason.email],
    ['mailto:bob@acme.com', DomainReason.email],
    ['1.2.3.4', DomainReason.ip],
    ['http://10.0.0.1:8080/admin', DomainReason.ip],
    ['[::1]:8080', DomainReason.ip],
    ['2001:db8::1', DomainReason.ip],
    ['acme..com', 'empty label (two dots in a row, or a leading dot)'],
    ['.acme.com', 'empty label (two dots in a row, or a leading dot)'],
    ['acme.com..', 'empty label (two dots in a row, or a leading dot)'],
    ['a_b.com', 'contains "_"'],
    ['a%41.com', 'contains "%"'],
    ['exa mple.com', 'contains whitespace'],
    ['-acme.com', 'label starts or ends with "-"'],
    ['acme-.com', 'label starts or ends with "-"'],
    ['acme.c0m', 'top-level domain is not alphabetic'],
    ['acme.c', 'top-level domain is not alphabetic'],
    ['0x7f.1', 'top-level domain is not alphabetic'],
    ['xn--a.com', 'invalid punycode label'],
    [`${'a'.repeat(64)}.com`, 'label longer than 63 characters'],
    [`${'abcdefghi.'.repeat(26)}com`, `longer than ${MAX_DOMAIN_LENGTH} characters`],
  ])('%j is rejected: %s', (input, reason) => {
    expect(normalizeDomain(input)).toEqual({ ok: false, reason });
  });

  it('accepts a name of exactly 253 characters and labels of exactly 63', () => {
    const label = 'a'.repeat(63);
    const domain = `${label}.${label}.${label}.${'b'.repeat(57)}.com`;
    expect(domain).toHaveLength(253);
    expect(domainOf(domain)).toBe(domain);
  });

  it('rejects an email address instead of guessing its domain', () => {
    expect(reasonOf('jane.doe@acme.com')).toBe('an email address, not a domain');
  });
});

describe('normalizeHostname (the domain of an email address)', () => {
  it('keeps www. and validates the bare name', () => {
    expect(normalizeHostname('WWW.Acme.COM')).toEqual({ ok: true, domain: 'www.acme.com' });
    expect(normalizeHostname('bücher.de.')).toEqual({ ok: true, domain: 'xn--bcher-kva.de' });
  });

  it('does not read URLs or ports', () => {
    expect(normalizeHostname('acme.com/x')).toEqual({ ok: false, reason: 'contains "/"' });
    expect(normalizeHostname('acme.com:25')).toEqual({ ok: false, reason: 'contains ":"' });
    expect(normalizeHostname('[1.2.3.4]')).toEqual({ ok: false, reason: DomainReason.ip });
  });
});

describe('normalizeDomain properties', () => {
  it('never throws, and returns a valid domain (stable on a second pass) or a reason: ASCII strings', () => {
    fc.assert(fc.property(fc.string({ maxLength: 80 }), checkShapeAndIdempotence), { numRuns: 2000 });
  });

  it('same for any Unicode string (fast-check 4 spells fullUnicodeString as unit "binary")', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 80 }), checkShapeAndIdempotence), { numRuns: 2000 });
  });

  it('same for any UTF-16 string, lone surrogates included', () => {
    const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
    fc.assert(fc.property(fc.string({ unit: codeUnit, maxLength: 80 }), checkShapeAndIdempotence), { numRuns: 2000 });
  });

  it('same for strings built from domain-ish pieces (hits the valid branch often)', () => {
    const piece = fc.constantFrom(
      'www.',
      'WWW.',
      'acme',
      '.',
      '..',
      'com',
      'xn--',
      'bücher',
      '-',
      ':80',
      '/',
      '@',
      'http://',
      '//',
      '１',
      'ß',
      '。',
      ' ',
      '\u200b',
    );
    const messy = fc.array(piece, { maxLength: 12 }).map((pieces) => pieces.join(''));
    fc.assert(fc.property(messy, checkShapeAndIdempotence), { numRuns: 3000 });
  });

  it('same for web URLs with user info, ports, IPs, queries and fragments', () => {
    const url = fc.webUrl({
      withQueryParameters: true,
      withFragments: true,
      authoritySettings: { withUserInfo: true, withPort: true, withIPv4: true, withIPv6: true, withIPv4Extended: true },
    });
    fc.assert(fc.property(url, checkShapeAndIdempotence), { numRuns: 1000 });
  });

  it('accepts every fc.domain() that fits in 253 characters, minus its leading www.', () => {
    const domain = fc.domain().filter((d) => d.length <= MAX_DOMAIN_LENGTH);
    fc.assert(
      fc.property(domain, (d) => {
        expect(domainOf(d)).toBe(withoutWww(d));
        expect(domainOf(d.toUpperCase())).toBe(withoutWww(d));
        expect(domainOf(`${d}.`)).toBe(withoutWww(d));
      }),
      { numRuns: 1000 },
    );
  });

  it('recovers the domain from a web URL built on it', () => {
    const domain = fc.domain().filter((d) => d.length <= MAX_DOMAIN_LENGTH);
    const urlOn = domain.chain((d) =>
      fc.tuple(
        fc.constant(d),
        fc
          .webUrl({
            withQueryParameters: true,
            withFragments: true,
            authoritySettings: { withUserInfo: true, withPort: true },
          })
          .map((url) => replaceHost(url, d)),
      ),
    );
    fc.assert(
      fc.property(urlOn, ([d, url]) => {
        expect(domainOf(url)).toBe(withoutWww(d));
      }),
      { numRuns: 1000 },
    );
  });

  it('rejects every IPv4 address with the IP reason', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        expect(reasonOf(ip)).toBe(DomainReason.ip);
        expect(reasonOf(`https://${ip}:8080/x`)).toBe(DomainReason.ip);
      }),
    );
  });

  it('rejects every IPv6 address with the IP reason', () => {
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        expect(reasonOf(ip)).toBe(DomainReason.ip);
        expect(reasonOf(`http://[${ip}]/`)).toBe(DomainReason.ip);
      }),
    );
  });
});

/** Swaps the host of a generated URL (`scheme://[userinfo@]host[:port]/...`) for `host`. */
function replaceHost(url: string, host: string): string {
  return url.replace(/^([a-z]+:\/\/(?:[^@/?#]*@)?)[^:/?#]+/, `$1${host}`);
}

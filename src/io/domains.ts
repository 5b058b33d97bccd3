import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/**
 * Turning what users paste as "a domain" (a URL, `WWW.Acme.com.`, `bücher.de`) into the one
 * spelling the service knows, or a short reason for a message such as
 * `line 7: "http//foo" is not a domain (no dot)`.
 */
export type DomainResult = { ok: true; domain: string } | { ok: false; reason: string };

export const MAX_DOMAIN_LENGTH = 253;
const MAX_LABEL_LENGTH = 63;

export const DomainReason = {
  empty: 'empty',
  email: 'an email address, not a domain',
  ip: 'an IP address, not a domain',
} as const;

/** Never throws: every string gets either a domain or a reason. Idempotent on its own output. */
export function normalizeDomain(input: string): DomainResult {
  const trimmed = input.trim();
  if (trimmed === '') return fail(DomainReason.empty);
  const host = extractHost(trimmed);
  if (!host.ok) return host;
  const ascii = toAsciiHost(host.domain.toLowerCase());
  if (!ascii.ok) return ascii;
  const domain = stripWww(ascii.domain);
  const problem = hostnameProblem(domain);
  return problem === null ? { ok: true, domain } : fail(problem);
}

/**
 * Validates a bare host name without any URL tolerance and without dropping `www.`: the domain
 * of an email address is exactly what it is (`bob@www.acme.com` is not `bob@acme.com`).
 */
export function normalizeHostname(input: string): DomainResult {
  const host = input.trim().toLowerCase();
  if (host === '') return fail(DomainReason.empty);
  if (host.startsWith('[') || isIP(host) !== 0) return fail(DomainReason.ip);
  const ascii = toAsciiHost(host);
  if (!ascii.ok) return ascii;
  const problem = hostnameProblem(ascii.domain);
  return problem === null ? ascii : fail(problem);
}

function fail(reason: string): { ok: false; reason: string } {
  return { ok: false, reason };
}

// `xxx://` and `//`, plus the http typos people really make (`http:/acme.com`, `https:acme.com`,
// `https//acme.com`) - no host is ever called "http", so recovering them cannot go wrong.
const SCHEME = /^(?:[a-z][a-z0-9+.-]*:\/\/|\/\/|https?:\/?|https?\/\/)/i;
const AUTHORITY_END = /[/?#\\]/;

/** The host part of a URL-ish string: no scheme, userinfo, path, query, fragment or port. */
function extractHost(text: string): DomainResult {
  const scheme = SCHEME.exec(text);
  const rest = scheme === null ? text : text.slice(scheme[0].length);
  const endIndex = rest.search(AUTHORITY_END);
  let authority = endIndex === -1 ? rest : rest.slice(0, endIndex);
  const at = authority.lastIndexOf('@');
  if (at !== -1) {
    // Without a scheme, `bob@acme.com` is someone's address: guessing the domain out of it
    // would hide a mix-up of input files, so it is rejected with a reason saying so.
    if (scheme === null) return fail(at > 0 ? DomainReason.email : 'contains "@"');
    authority = authority.slice(at + 1);
  }
  if (authority.startsWith('[') || isIP(authority) !== 0) return fail(DomainReason.ip);
  const host = authority.replace(/:\d*$/, '');
  if (isIP(host) !== 0) return fail(DomainReason.ip);
  return host === '' ? fail(DomainReason.empty) : { ok: true, domain: host };
}

/**
 * Punycode for international names, and one trailing dot (the DNS root) dropped. Pure ASCII skips
 * `domainToASCII`, whose WHATWG host parsing would silently percent-decode (`a%41.com`) or read
 * `0x7f.1` as an IPv4 address; validation then names the offending character instead.
 */
function toAsciiHost(host: string): DomainResult {
  let ascii = host;
  if (!isAscii(host)) {
    const problem = characterProblem(host, NOT_HOST_CHARACTER_OR_NON_ASCII);
    if (problem !== null) return fail(problem);
    ascii = domainToASCII(host);
    if (ascii === '') return fail('not a valid international domain name');
  }
  if (ascii.endsWith('.')) ascii = ascii.slice(0, -1);
  return ascii === '' ? fail(DomainReason.empty) : { ok: true, domain: ascii };
}

/** Leading `www.` labels go (`www.www.x.com` too, so the result is stable), but `www.com` stays. */
function stripWww(domain: string): string {
  let result = domain;
  while (result.startsWith('www.') && result.indexOf('.', 4) !== -1) result = result.slice(4);
  return result;
}

/** Why an ASCII host name is not a domain, or null when it is one. */
function hostnameProblem(host: string): string | null {
  if (host.length > MAX_DOMAIN_LENGTH) return `longer than ${MAX_DOMAIN_LENGTH} characters`;
  const badCharacter = characterProblem(host, NOT_HOST_CHARACTER);
  if (badCharacter !== null) return badCharacter;
  const labels = host.split('.');
  if (labels.every((label) => /^\d+$/.test(label))) {
    return labels.length === 4 ? DomainReason.ip : labels.length === 1 ? 'no dot' : 'only digits';
  }
  if (labels.length < 2) return 'no dot';
  for (const label of labels) {
    const problem = labelProblem(label);
    if (problem !== null) return problem;
  }
  return topLevelProblem(labels[labels.length - 1] ?? '');
}

function labelProblem(label: string): string | null {
  if (label === '') return 'empty label (two dots in a row, or a leading dot)';
  if (label.length > MAX_LABEL_LENGTH) return `label longer than ${MAX_LABEL_LENGTH} characters`;
  if (label.startsWith('-') || label.endsWith('-')) return 'label starts or ends with "-"';
  // An `xn--` label must be real punycode, or it would be sent to the service as nonsense.
  if (label.startsWith('xn--') && domainToASCII(label) !== label) return 'invalid punycode label';
  return null;
}

// Real top-level domains are letters (two or more) or punycode; `acme.c0m` and `acme.c` are typos.
function topLevelProblem(tld: string): string | null {
  if (tld.startsWith('xn--') || /^[a-z]{2,}$/.test(tld)) return null;
  return 'top-level domain is not alphabetic';
}

const NOT_HOST_CHARACTER = /[^a-z0-9.-]/;
const NOT_HOST_CHARACTER_OR_NON_ASCII = /[^a-z0-9.\-\u{80}-\u{10FFFF}]|\s/u;

function characterProblem(host: string, forbidden: RegExp): string | null {
  const match = forbidden.exec(host);
  if (match === null) return null;
  return /\s/u.test(match[0]) ? 'contains whitespace' : `contains ${JSON.stringify(match[0])}`;
}

function isAscii(text: string): boolean {
  return /^[\x00-\x7f]*$/.test(text);
}

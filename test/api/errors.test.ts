import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  AbortedError,
  AuthError,
  ClientOptionError,
  BadRequestError,
  MalformedResponseError,
  ServiceError,
  RequestError,
  UnanswerableError,
} from '../../src/api/errors.js';
import { errorFromResponse, parseErrorBody, retriesExhaustedError } from '../../src/api/error-responses.js';
import { ExitCode, exitCodeOf, knownFailure } from '../../src/exit-codes.js';

const json = (value: unknown): string => JSON.stringify(value);
const map = (status: number, body: unknown = '', endpoint = '/companies') =>
  errorFromResponse({ endpoint, status, bodyText: typeof body === 'string' ? body : json(body) });

describe("errorFromResponse: status → class, and the CLI's exit code for it", () => {
  it.each([
    [400, BadRequestError, 'bad_request', ExitCode.usage],
    [404, BadRequestError, 'not_found', ExitCode.usage],
    [401, AuthError, 'auth', ExitCode.auth],
    [403, AuthError, 'forbidden', ExitCode.auth],
    [422, UnanswerableError, 'unanswerable', ExitCode.unanswerable],
    [500, ServiceError, 'unavailable', ExitCode.service],
    [503, ServiceError, 'unavailable', ExitCode.service],
    [429, ServiceError, 'unavailable', ExitCode.service],
    [405, ServiceError, 'unexpected_status', ExitCode.service],
    [302, ServiceError, 'redirect', ExitCode.service],
  ])('%i → %o', (status, cls, kind, exitCode) => {
    // A 422 needs a code the client can read as the contract's (row 7c); the others any code.
    const error = map(status, { error: { code: status === 422 ? 'no_match' : 'x', reason: 'y' } });
    expect(error).toBeInstanceOf(cls);
    expect(error.kind).toBe(kind);
    expect(error).toBeInstanceOf(RequestError);
    expect(exitCodeOf(error)).toBe(exitCode);
    expect(error.status).toBe(status);
    expect(error.retryable).toBe(status === 429 || status >= 500);
  });

  it('401 says how to set the key: the CLI words are added where the exit code is decided', () => {
    const error = map(401, { error: { code: 'unauthorized', reason: 'unknown key' } });
    expect(error.message).toBe('the service rejected the API key (401 unauthorized).');
    expect(error.kind).toBe('auth');
    expect(error.hint).toBeUndefined();
    expect(knownFailure(error)?.hint).toBe(
      'Set PROSPECT_API_KEY (or `prospect config set api-key`), or try --sandbox.',
    );
    expect(error.reason).toBe('unknown key');
  });

  it('403 plan_required on /contacts names the plan', () => {
    const error = map(403, { error: { code: 'plan_required', reason: 'upgrade' } }, '/contacts');
    expect(error.message).toBe(
      "the contacts endpoint needs the Growth plan or higher; this key's plan does not include it (403 plan_required).",
    );
    expect(error.code).toBe('plan_required');
  });

  it("422 carries the reason; the CLI's hint lists the suggestions", () => {
    const error = map(422, {
      error: {
        code: 'unknown_technology',
        reason: 'unknown technology "shopfy"',
        suggestions: ['Shopify', 'Shopware'],
      },
    });
    expect(error).toBeInstanceOf(UnanswerableError);
    expect(error.message).toBe(
      'the service would not answer this request (422 unknown_technology): unknown technology "shopfy"',
    );
    expect(error.details).toEqual({ suggestions: ['Shopify', 'Shopware'] });
    expect(error.hint).toBeUndefined();
    expect(knownFailure(error)?.hint).toBe('Closest names: Shopify, Shopware.');
  });

  it('422 suggestions already named in the reason are not repeated as a hint', () => {
    const error = map(422, {
      error: {
        code: 'unknown_technology',
        reason: 'unknown. Did you mean: Shopify, Shopware?',
        suggestions: ['Shopify', 'Shopware'],
      },
    });
    expect(knownFailure(error)?.hint).toBeUndefined();
    expect(error.message).toContain('Did you mean: Shopify, Shopware?');
  });

  it("422 valid_values become the CLI's hint", () => {
    const error = map(422, {
      error: { code: 'unknown_employee_range', reason: 'no label', valid_values: ['1-10', '11-50'] },
    });
    expect(knownFailure(error)?.hint).toBe('Valid values: 1-10, 11-50.');
  });

  it('422 without a reason is a broken contract: a clear message and exit 5', () => {
    expect(map(422, '').message).toMatch(
      /^the service refused the request \(422\) without the reason the specification promises, and whether/,
    );
    expect(exitCodeOf(map(422, ''))).toBe(5);
    expect(map(422, { error: { code: 'no_match' } }).message).toMatch(
      /^the service refused the request \(422 no_match\) without the reason the specification promises/,
    );
  });

  // Issue 42: the error-body shapes of other services (row 8), each a misspelt technology, a filter that
  // matches nobody, and a 422 that says neither. A misspelt name is exit 2 under every shape.
  const misspelt = [
    ['the contract', { error: { code: 'unknown_technology', reason: 'unknown technology "shopfy"' } }],
    ['{error: text}', { error: 'Unknown technology: shopfy' }],
    ['{message}', { message: 'Technology shopfy not found' }],
    ['{message} with suggestions', { message: 'No such name', suggestions: ['Shopify'] }],
    ['{errors: [...]}', { errors: [{ code: 'technology_not_found', detail: 'shopfy is not a technology' }] }],
    ['{errors: [...]} with a title only', { errors: [{ title: 'Invalid technology' }] }],
    [
      'problem+json',
      { type: 'https://api.example.com/problems/unknown-technology', title: 'Unknown technology', status: 422 },
    ],
    ['problem+json, about:blank', { type: 'about:blank', title: 'Unprocessable', detail: 'did you mean Shopify?' }],
    ['a code of its own', { error: { code: 'bad_filter', reason: 'x', valid_values: ['Shopify'] } }],
  ] as const;
  it.each(misspelt)('422 as %s, a misspelt technology: exit 2, with the service reason', (_shape, body) => {
    const error = map(422, body);
    expect(error).toBeInstanceOf(UnanswerableError);
    expect(error.code).toBe('unknown_technology');
    expect(error.kind).toBe('refused_value');
    expect(exitCodeOf(error)).toBe(ExitCode.usage);
    expect(error.reason).not.toMatch(/^unprocessable entity$/);
  });

  it.each([
    ['{message}', { message: 'No results for these filters' }],
    ['problem+json', { type: 'https://x.example/errors/no-match', title: 'No match', status: 422 }],
    ['{errors: [...]}', { errors: [{ code: 'no_match', message: 'nothing matched' }] }],
  ])('422 as %s, nothing matched: exit 3', (_shape, body) => {
    const error = map(422, body);
    expect(error.code).toBe('no_match');
    expect(exitCodeOf(error)).toBe(ExitCode.unanswerable);
  });

  it.each([
    ['a reason that says neither', { message: 'Request could not be processed' }],
    ['no reason', { errors: [] }],
    ['HTML', '<html>422</html>'],
  ])('422 with %s: exit 5, never "nothing matched"', (_shape, body) => {
    const error = map(422, body);
    expect(error).toBeInstanceOf(MalformedResponseError);
    expect(exitCodeOf(error)).toBe(ExitCode.service);
  });

  it('reads code and reason from every error-body shape, the first of several errors', () => {
    const bodies: Array<[unknown, string | undefined, string | undefined]> = [
      [
        {
          errors: [
            { code: 'a_b', message: 'first' },
            { code: 'c', message: 'second' },
          ],
        },
        'a_b',
        'first',
      ],
      [
        { type: 'https://e.example/p/Rate-Limited', title: 'Slow down', detail: 'wait 2 s' },
        'rate_limited',
        'wait 2 s',
      ],
      [{ type: 'about:blank', title: 'Not Found' }, undefined, 'Not Found'],
      [{ message: 'plain' }, undefined, 'plain'],
    ];
    for (const [body, code, reason] of bodies) {
      const parsed = parseErrorBody(json(body));
      expect([parsed.code, parsed.reason]).toEqual([code, reason]);
    }
    expect(parseErrorBody(json({ title: 'x', suggestions: ['Shopify'] })).details).toEqual({
      suggestions: ['Shopify'],
    });
  });

  it('a 3xx names where it redirected and refuses to follow', () => {
    const error = errorFromResponse({
      endpoint: '/companies',
      status: 301,
      bodyText: '',
      location: 'https://evil.example:8443/x?y',
    });
    expect(error.message).toBe(
      'the service redirected to https://evil.example:8443 (301 Moved Permanently); prospect does not follow redirects with your key',
    );
    expect(exitCodeOf(error)).toBe(ExitCode.service);
  });

  it('400 quotes the service', () => {
    const error = map(400, { error: { code: 'invalid_parameter', reason: 'limit must be 1 to 1000' } });
    expect(error.message).toBe(
      'the service rejected the request to /companies (400 invalid_parameter): limit must be 1 to 1000',
    );
  });

  it('every status maps to a RequestError with a one-line message and a documented exit code', () => {
    const codes = new Set<number>([ExitCode.usage, ExitCode.unanswerable, ExitCode.auth, ExitCode.service]);
    fc.assert(
      fc.property(fc.integer({ min: 300, max: 599 }), fc.string(), (status, body) => {
        const error = map(status, body);
        return (
          error instanceof RequestError &&
          codes.has(exitCodeOf(error)) &&
          !error.message.includes('\n') &&
          error.status === status
        );
      }),
    );
  });
});

describe('parseErrorBody: tolerant', () => {
  it('reads the contract shape and keeps extra fields as details', () => {
    expect(parseErrorBody(json({ error: { code: 'rate_limited', reason: 'slow down', retry_after: 2 } }))).toEqual({
      code: 'rate_limited',
      reason: 'slow down',
      details: { retry_after: 2 },
    });
  });

  it('reads {"error": "text"}, {"message": ...} and top-level code/reason, saying where it read them', () => {
    expect(parseErrorBody(json({ error: 'Something broke' }))).toEqual({
      reason: 'Something broke',
      details: {},
      shape: 'error text',
    });
    expect(parseErrorBody(json({ error: 'not_found' }))).toEqual({
      code: 'not_found',
      reason: 'not_found',
      details: {},
      shape: 'error text',
    });
    expect(parseErrorBody(json({ message: 'Bad gateway' }))).toEqual({
      reason: 'Bad gateway',
      details: {},
      shape: 'top-level fields',
    });
    expect(parseErrorBody(json({ code: 'x', reason: 'y', extra: 1 }))).toEqual({
      code: 'x',
      reason: 'y',
      details: { extra: 1 },
      shape: 'top-level fields',
    });
    // The contract's own shape is not marked: doctor says "matches" for it.
    expect(parseErrorBody(json({ error: { code: 'x', reason: 'y' } })).shape).toBeUndefined();
    expect(parseErrorBody('<html>').shape).toBe('no JSON');
  });

  it('knows nothing from a non-JSON or odd body', () => {
    for (const body of ['<html>502</html>', '', 'null', '[1,2]', '"text"', '{"error":{"reason":""}}']) {
      const parsed = parseErrorBody(body);
      expect(parsed.reason).toBeUndefined();
      expect(parsed.code).toBeUndefined();
    }
  });

  it('gives a generic reason when the body says nothing', () => {
    const error = map(503, '<html>down</html>');
    expect(error.reason).toBe('service unavailable');
    expect(error.message).toBe('the service failed to answer /companies (503 Service Unavailable)');
  });

  it('collapses a multi-line reason into one line', () => {
    expect(map(400, { error: { reason: 'a\n  b' } }).message).toMatch(/: a b$/);
  });
});

describe('redaction', () => {
  it('removes the key from reasons, details and messages', () => {
    const secret = 'sk_live_SECRET123';
    const error = errorFromResponse({
      endpoint: '/companies',
      status: 401,
      secret,
      bodyText: json({
        error: { code: 'unauthorized', reason: `unknown key ${secret}`, echo: { [secret]: [secret] } },
      }),
    });
    const everything = `${error.message} ${error.stack} ${JSON.stringify(error)} ${error.reason}`;
    expect(everything).not.toContain(secret);
    expect(error.reason).toBe('unknown key [redacted]');
  });
});

describe('other error classes', () => {
  it('exit codes', () => {
    expect(exitCodeOf(new MalformedResponseError('x'))).toBe(ExitCode.service);
    expect(exitCodeOf(new AbortedError('/companies'))).toBe(ExitCode.interrupted);
    expect(exitCodeOf(new ClientOptionError('bad base URL'))).toBe(ExitCode.usage);
    expect(new UnanswerableError('x').reason).toBe('x');
  });

  it('carry no exit code and no prefix of their own; the CLI shows message and hint as they are', () => {
    const error = map(400, { error: { code: 'bad_parameter', reason: 'no' } });
    expect(error).not.toHaveProperty('exitCode');
    expect(error.message).not.toMatch(/^prospect:/);
    expect(knownFailure(error)).toEqual({ message: error.message, hint: error.hint, exitCode: ExitCode.usage });
  });

  it('retries exhausted says attempts, the last failure and what to do', () => {
    const error = retriesExhaustedError(
      '/companies',
      6,
      { kind: 'status', error: map(503, { error: { code: 'internal_error', reason: 'boom' } }) },
      'api.example.com:443',
    );
    expect(error.message).toBe(
      'no answer from api.example.com:443 for /companies after 6 attempts (last: 503 internal_error "boom")',
    );
    expect(error.kind).toBe('status');
    expect(knownFailure(error)?.hint).toBe('Try again later; check the service status.');
    expect(error.attempts).toBe(6);
    expect(error.retryable).toBe(true);
    expect(exitCodeOf(error)).toBe(ExitCode.service);
  });
});

describe('a reason with control characters', () => {
  it('becomes one line of plain text in the error, before any printing: --debug shows it as is', () => {
    const hostile = 'bad \u001b]0;owned\u0007filter\u001b[2K\r\n\u009b31m\u0008end';
    const error = map(400, { error: { code: 'invalid_parameter', reason: hostile } });
    expect(error.reason).toBe('bad filter end');
    expect(error.message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });
});

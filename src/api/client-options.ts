/**
 * The client's options, and the checks that refuse unsafe or invalid ones with a ClientOptionError
 * before any connection: where the key may be sent, what a key may hold, the bounds of each number.
 */
import { ClientOptionError } from './errors.js';
import { MAX_ANSWER_BYTES_LIMIT, MAX_COMPANIES_PER_PAGE } from './limits.js';
import type { Dispatcher } from 'undici';
import type { ContractSettings } from './contract.js';
import type { RequestPacer } from './pacer.js';
import { isLoopbackHost } from './proxy.js';
import type { RequestEvent } from './request-loop.js';
import type { WaitNotice } from './wait-watch.js';

export interface ClientOptions {
  /** The service root, e.g. `http://127.0.0.1:4010` (without /api/v1); a trailing slash is fine. */
  baseUrl: string;
  apiKey: string;
  /** Name of the cursor query parameter; default `cursor` (contract row 1). */
  cursorParam?: string | undefined;
  /** How the service decided the open points the client cannot guess (contract.ts); default the contract's. */
  contract?: Partial<ContractSettings> | undefined;
  /** Companies `limit`; default 1000 (contract row 2). */
  pageSize?: number | undefined;
  /** Per attempt, covering headers and body; default RETRY_DEFAULTS.timeoutMs (src/api/retry.ts). */
  timeoutMs?: number | undefined;
  /** Default RETRY_DEFAULTS.maxRetries. */
  maxRetries?: number | undefined;
  /** Longest single wait between attempts; default RETRY_DEFAULTS.maxDelayMs. */
  maxRetryDelayMs?: number | undefined;
  /** Backoff base; default RETRY_DEFAULTS.baseDelayMs. */
  retryBaseDelayMs?: number | undefined;
  /** Connection pool size per origin; default 16. */
  connections?: number;
  /** Decoded bytes one answer may have; default DEFAULT_MAX_ANSWER_BYTES (limits.ts). Over it: a final error. */
  maxAnswerBytes?: number | undefined;
  userAgent?: string;
  /** Aborts everything in flight and every wait (SIGINT). */
  signal?: AbortSignal | undefined;
  onRequest?: ((event: RequestEvent) => void) | undefined;
  /** Jitter source in [0, 1); default Math.random. Tests inject a fixed one. */
  random?: () => number;
  /** The proxy to go through (decideProxy in proxy.ts reads it as curl does); default: none. */
  proxy?: URL | undefined;
  /** PEM certificates to trust instead of Node's own list; default: Node's (with NODE_EXTRA_CA_CERTS). */
  ca?: readonly string[] | undefined;
  /** For the TCP connection and TLS handshake; default the shorter of 10 s and timeoutMs. */
  connectTimeoutMs?: number | undefined;
  /** Told while a request has waited a while for its answer (WAIT_NOTICE_AFTER_MS), and when none does any more. */
  onWaiting?: ((notice: WaitNotice | undefined) => void) | undefined;
  /**
   * One pace for several clients of the same service and key (a run's paid calls and its listing):
   * the service's rate limit counts them all. Default: a pacer of this client's own.
   */
  pacer?: RequestPacer | undefined;
  /**
   * The undici dispatcher every request goes through instead of the client's own (a MockAgent, a stub):
   * the seam tests use, as openai-node takes a `fetch`. The client does not close it; proxy and ca then do nothing.
   */
  dispatcher?: Dispatcher | undefined;
}

/** Throws a ClientOptionError when the options are unsafe or invalid; the base URL, parsed, when they are not. */
export function checkClientOptions(options: ClientOptions): URL {
  const baseUrl = checkBaseUrl(options.baseUrl);
  checkApiKey(options.apiKey);
  checkNumbers(options);
  if (options.cursorParam !== undefined && options.cursorParam.trim() === '') {
    throw new ClientOptionError(
      'the cursor parameter name is empty',
      'Set cursor-param to the name the service uses (default: cursor).',
    );
  }
  return baseUrl;
}

/**
 * The key goes in a header of every request, so where requests go is a security decision:
 * https anywhere, plain http only to this machine.
 */
export function checkBaseUrl(baseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw new ClientOptionError(
      `the base URL "${baseUrl}" is not a valid URL`,
      'Give the service root, e.g. https://api.example.com',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    // `localhost:4010` parses as the scheme "localhost:": say what was typed, and what it lacks.
    const typed = baseUrl.trim();
    if (!typed.includes('//'))
      throw new ClientOptionError(
        `the base URL "${typed}" has no scheme`,
        `Give it with one: https://${typed} (or http://${typed} for this machine, such as the sandbox).`,
      );
    throw new ClientOptionError(`the base URL must start with https:// (got ${url.protocol}//)`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ClientOptionError(
      'the base URL must not contain a user name or password',
      'The key travels in a header, never in the URL.',
      'credentials_in_base_url',
    );
  }
  if (url.search !== '' || url.hash !== '') {
    throw new ClientOptionError(
      `the base URL must not contain a query or a fragment (${url.origin}${url.pathname}...)`,
    );
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    throw new ClientOptionError(
      `refusing to send the API key over plain http to ${url.host}; use https://`,
      'Plain http is allowed only to this machine (127.0.0.0/8, ::1, localhost), e.g. the sandbox.',
    );
  }
  return url;
}

function checkApiKey(apiKey: string): void {
  if (apiKey === '') {
    throw new ClientOptionError('no API key is set', undefined, 'no_api_key');
  }
  // Never echo the key: a message about it could end up in a log.
  if (/[\s\u0000-\u001f\u007f]/.test(apiKey)) {
    throw new ClientOptionError(
      'the API key contains spaces or control characters',
      'Check for a stray newline when it was pasted.',
    );
  }
  // A header carries Latin-1 at most; a character past it (a smart quote pasted from a document)
  // would fail inside the HTTP library as an internal error, and no service issues such a key.
  const outside = [...apiKey].findIndex((char) => char.charCodeAt(0) > 0x7e);
  if (outside !== -1) {
    throw new ClientOptionError(
      `the API key contains a character that is not plain ASCII (character ${outside + 1})`,
      'Keys are letters, digits and punctuation: check for a smart quote or a look-alike letter pasted with it.',
    );
  }
}

/** Node timers overflow (and fire at once) above 2^31-1 ms, so longer waits are refused. */
const MAX_TIMER_MS = 2_147_483_647;

const NUMBER_LIMITS: ReadonlyArray<[keyof ClientOptions, number, number]> = [
  ['pageSize', 1, MAX_COMPANIES_PER_PAGE],
  ['timeoutMs', 1, MAX_TIMER_MS],
  ['connectTimeoutMs', 1, MAX_TIMER_MS],
  ['maxRetries', 0, 100],
  ['maxRetryDelayMs', 0, MAX_TIMER_MS],
  ['retryBaseDelayMs', 0, MAX_TIMER_MS],
  ['connections', 1, 1024],
  ['maxAnswerBytes', 1024, MAX_ANSWER_BYTES_LIMIT],
];

function checkNumbers(options: ClientOptions): void {
  for (const [name, min, max] of NUMBER_LIMITS) {
    const value = options[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new ClientOptionError(`${name} must be an integer from ${min} to ${max} (got ${String(value)})`);
    }
  }
}

/**
 * describeTransportFailure: a timeout is its own kind of failure with words for its code; every other
 * network failure has a class (DNS, refused, proxy, connection) that picks the give-up hint.
 */
import { describe, expect, it } from 'vitest';
import { describeTransportFailure } from '../../src/api/transport-errors.js';

const FACTS = { timedOut: false, timeoutMs: 4000, secret: 'k', baseUrl: new URL('https://api.example.com') };
const failing = (code: string) => Object.assign(new Error(`failed: ${code}`), { code });

describe('describeTransportFailure', () => {
  it.each([
    ['UND_ERR_CONNECT_TIMEOUT', 'no connection'],
    ['UND_ERR_HEADERS_TIMEOUT', 'no answer'],
    ['UND_ERR_BODY_TIMEOUT', 'the answer stopped coming'],
    ['ETIMEDOUT', 'no connection'],
  ])('%s is a timeout, said as "%s"', (code, words) => {
    expect(describeTransportFailure(failing(code), FACTS)).toMatchObject({
      kind: 'timeout',
      timeoutMs: 4000,
      where: 'api.example.com:443',
      words,
    });
  });

  it.each([
    ['ECONNREFUSED', 'refused', 'connection refused (ECONNREFUSED)'],
    ['ECONNRESET', 'connection', 'connection reset (ECONNRESET)'],
    ['EAI_AGAIN', 'DNS', 'host name lookup failed temporarily (EAI_AGAIN)'],
  ])('%s is a network failure of class %s', (code, failureClass, description) => {
    expect(describeTransportFailure(failing(code), FACTS)).toMatchObject({
      kind: 'network',
      failureClass,
      where: 'api.example.com:443',
      description,
    });
  });
});

'use strict';
// What the CLI bundle uses in place of `undici` (scripts/bundle.mjs): the same Agent and request()
// from the same undici files, without undici's index.js, which loads all of undici: fetch, WebSocket,
// EventSource, the cache and mock layers. The CLI only ever calls request() with its own Agent
// (src/api/http.ts), and this is 6 MB less resident memory for every command that makes a call.
// request() is undici's own, as index.js builds it (makeDispatcher in undici/index.js), for the
// only form src/api/http.ts uses: a URL string and options that name the dispatcher.
// The library build (dist/src, tsc) keeps importing undici itself.
const Agent = require('undici/lib/dispatcher/agent');
const Dispatcher = require('undici/lib/dispatcher/dispatcher');
const api = require('undici/lib/api');
const util = require('undici/lib/core/util');
const { InvalidArgumentError } = require('undici/lib/core/errors');

Object.assign(Dispatcher.prototype, api);

function request(url, opts) {
  if (typeof url !== 'string' || opts === null || typeof opts !== 'object' || opts.path != null || !opts.dispatcher) {
    throw new InvalidArgumentError('prospect: request() takes a URL string and options with a dispatcher');
  }
  const parsed = util.parseURL(url);
  return api.request.call(opts.dispatcher, {
    ...opts,
    origin: parsed.origin,
    path: parsed.search ? `${parsed.pathname}${parsed.search}` : parsed.pathname,
    method: opts.method || (opts.body ? 'PUT' : 'GET'),
  });
}

module.exports = { Agent, request };

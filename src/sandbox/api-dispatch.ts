/**
 * Which route answers an /api/v1 request, once its path (404), method (405), key (401) and rate
 * limit (429) let it through; the route then checks the plan (403), the parameters (400) and the data (422).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { authenticate } from './auth.js';
import { ApiError } from './errors.js';
import { parseQuery, type RawQuery } from './query.js';
import type { RateLimiter } from './rate-limit.js';
import type { Endpoint, StatsCounter } from './stats.js';
import type { Reply, Route } from './types.js';

export interface ApiRoutes {
  readonly routes: Readonly<Record<Exclude<Endpoint, 'other'>, Route>>;
  readonly stats: StatsCounter;
  readonly rateLimiter: RateLimiter | undefined;
}

/** A request as its route sees it: the method and query once a variant (variants.ts) has read them its way. */
export interface RoutedRequest {
  readonly method: string | undefined;
  readonly search: string;
  readonly headers: IncomingHttpHeaders;
}

const API_PATHS: Readonly<Record<string, Exclude<Endpoint, 'other'>>> = {
  '/api/v1/companies': 'companies',
  '/api/v1/countries': 'countries',
  '/api/v1/contacts': 'contacts',
  '/api/v1/verify': 'verify',
};

export function endpointOf(path: string): Endpoint {
  return API_PATHS[path] ?? 'other';
}

/** The route's reply; an ApiError for a request that does not reach one. */
export function serveApi(api: ApiRoutes, req: RoutedRequest, endpoint: Endpoint): Reply {
  if (endpoint === 'other')
    throw new ApiError(
      404,
      'not_found',
      'No such endpoint. Endpoints: /api/v1/companies, /api/v1/countries, /api/v1/contacts, /api/v1/verify.',
    );
  assertReadMethod(req.method);
  const plan = authenticate(req.headers.authorization);
  const limit = api.rateLimiter?.check(plan);
  if (limit && !limit.allowed) {
    api.stats.countRateLimited();
    throw new ApiError(
      429,
      'rate_limited',
      `Too many requests for this key; retry after ${limit.retryAfterSeconds} s.`,
      { retry_after: limit.retryAfterSeconds },
      {
        'retry-after': String(limit.retryAfterSeconds),
      },
    );
  }
  // Parsed on first use, so a route can check the plan (403) before the query's syntax (400).
  let query: RawQuery | undefined;
  return api.routes[endpoint]({
    plan,
    headers: req.headers,
    get query() {
      return (query ??= parseQuery(req.search));
    },
  });
}

export function assertReadMethod(method: string | undefined): void {
  if (method !== 'GET' && method !== 'HEAD') {
    throw new ApiError(
      405,
      'method_not_allowed',
      `Method ${String(method).slice(0, 16)} is not allowed; use GET.`,
      {},
      { allow: 'GET, HEAD' },
    );
  }
}

/** What routes receive and return; the server does the HTTP around them. */
import type { IncomingHttpHeaders } from 'node:http';
import type { Plan } from './auth.js';
import type { RawQuery } from './query.js';

export interface ApiRequest {
  readonly plan: Plan;
  readonly query: RawQuery;
  readonly headers: IncomingHttpHeaders;
}

export interface Reply {
  readonly status: number;
  readonly body: unknown;
  /** The body as JSON, when the route assembled it from text it had (a companies page): sent as it is. */
  readonly json?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export type Route = (request: ApiRequest) => Reply;

/**
 * A transport stub for job tests, as gh's httpmock: each route is a method, a path and a subset of the
 * query, answered once (or `times`) with a given status and body. The test FAILS on a request no route
 * matches and on a route no request used (verify(), run when the test finishes). It is an undici
 * MockAgent given to the client as its dispatcher (ClientOptions.dispatcher): no socket, no server.
 *
 * An unmatched request is answered 400 `unmatched_stub` (a final error, so no retry waits on it) and
 * recorded, and verify() names it.
 */
import { MockAgent } from 'undici';
import { onTestFinished } from 'vitest';

/** The origin the stub answers for: loopback, so the client allows plain http. */
export const STUB_BASE_URL = 'http://127.0.0.1:9';

export interface StubReply {
  status?: number;
  /** JSON-encoded unless a string. */
  body: unknown;
  headers?: Record<string, string>;
}

interface Route {
  method: string;
  path: string;
  query: Readonly<Record<string, string>>;
  reply: StubReply;
  left: number;
  label: string;
}

export interface RouteStub {
  dispatcher: MockAgent;
  baseUrl: string;
  /** Answers the next `times` requests with this method, path and (at least) these query parameters. */
  route(method: string, path: string, query: Record<string, string>, reply: StubReply, times?: number): void;
  /** Every request that reached the stub, in order: `GET /api/v1/companies?technology=Shopify`. */
  readonly requests: readonly string[];
  /** Throws naming each unmatched request and each unused route. */
  verify(): void;
}

/** A stub for this test: verified when the test finishes, so an unused or unmatched route fails it. */
export function routeStub(): RouteStub {
  const stub = createRouteStub();
  onTestFinished(async () => {
    await stub.dispatcher.close();
    stub.verify();
  });
  return stub;
}

function createRouteStub(): RouteStub {
  const routes: Route[] = [];
  const requests: string[] = [];
  const unmatched: string[] = [];
  const agent = new MockAgent({ connections: 1 });
  agent.disableNetConnect();
  agent
    .get(STUB_BASE_URL)
    .intercept({ path: () => true, method: () => true })
    .reply((request) => {
      const url = new URL(request.path, STUB_BASE_URL);
      const seen = `${request.method} ${url.pathname}${url.search}`;
      requests.push(seen);
      const route = routes.find((each) => each.left > 0 && matches(each, request.method, url));
      if (route === undefined) {
        unmatched.push(seen);
        return reply({ status: 400, body: { error: { code: 'unmatched_stub', message: `no stub for ${seen}` } } });
      }
      route.left--;
      return reply(route.reply);
    })
    .persist();
  return {
    dispatcher: agent,
    baseUrl: STUB_BASE_URL,
    requests,
    route(method, path, query, answer, times = 1) {
      const label = `${method} ${path} ${JSON.stringify(query)}`;
      routes.push({ method: method.toUpperCase(), path, query, reply: answer, left: times, label });
    },
    verify() {
      const unused = routes.filter((route) => route.left > 0).map((route) => `unused stub: ${route.label}`);
      const problems = [...unmatched.map((request) => `unmatched request: ${request}`), ...unused];
      if (problems.length > 0) throw new Error(`route stub:\n${problems.join('\n')}`);
    },
  };
}

function matches(route: Route, method: string, url: URL): boolean {
  if (route.method !== method.toUpperCase() || route.path !== url.pathname) return false;
  return Object.entries(route.query).every(([key, value]) => url.searchParams.getAll(key).includes(value));
}

function reply(answer: StubReply) {
  const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
  return {
    statusCode: answer.status ?? 200,
    data: text,
    responseOptions: { headers: { 'content-type': 'application/json', ...answer.headers } },
  };
}

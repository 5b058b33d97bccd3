// A service that costs no CPU, for telling the client's own time from the sandbox's: a recorder that
// forwards requests to a sandbox and keeps each answer, and a server that answers the same requests
// again, byte for byte, after a fixed latency and nothing else. Plain Node, loopback only.
import { createServer } from 'node:http';

/** The request's path with its parameters sorted: the same query asked in another order is the same answer. */
function requestKey(url) {
  const parsed = new URL(url, 'http://replay.invalid');
  const parameters = [...parsed.searchParams].sort(([a, x], [b, y]) =>
    a === b ? (x < y ? -1 : x > y ? 1 : 0) : a < b ? -1 : 1,
  );
  return `${parsed.pathname}?${new URLSearchParams(parameters)}`;
}

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`));
  });
}

function closer(server) {
  return () => new Promise((resolve) => server.close(() => resolve()).closeAllConnections());
}

/** Forwards every request to `upstream` (Authorization header included); keeps each answer's status, type and bytes. */
export async function startRecorder(upstream) {
  const answers = new Map();
  const server = createServer(async (request, response) => {
    try {
      const answer = await fetch(`${upstream}${request.url}`, {
        headers: { authorization: request.headers.authorization ?? '' },
      });
      const recorded = {
        status: answer.status,
        type: answer.headers.get('content-type') ?? 'application/json',
        body: Buffer.from(await answer.arrayBuffer()),
      };
      answers.set(requestKey(request.url), recorded);
      response
        .writeHead(recorded.status, { 'content-type': recorded.type, 'content-length': recorded.body.length })
        .end(recorded.body);
    } catch (error) {
      response.writeHead(502).end(String(error));
    }
  });
  return { url: await listen(server), answers, stop: closer(server) };
}

/** Answers each recorded request with its recorded bytes `latencyMs` after it arrives; an unrecorded one gets a 500. */
export async function startReplay(answers, latencyMs) {
  let unrecorded = 0;
  const server = createServer((request, response) => {
    const recorded = answers.get(requestKey(request.url));
    setTimeout(() => {
      if (recorded === undefined) {
        unrecorded += 1;
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`not recorded: ${request.url}\n`);
        return;
      }
      response
        .writeHead(recorded.status, { 'content-type': recorded.type, 'content-length': recorded.body.length })
        .end(recorded.body);
    }, latencyMs);
  });
  return { url: await listen(server), unrecorded: () => unrecorded, stop: closer(server) };
}

/** The first pages the recorded run asked for (no cursor) of the companies listing, as query strings. */
export function firstPageQueries(answers) {
  return [...answers.keys()]
    .filter((key) => key.startsWith('/api/v1/companies?') && !new URLSearchParams(key.split('?')[1]).has('cursor'))
    .map((key) => key.split('?')[1]);
}

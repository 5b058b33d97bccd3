/**
 * A gate between prospect and a sandbox: it forwards every request, and answers only as many
 * companies pages as it is told. The next companies request waits, unanswered, until the gate
 * closes, so a pipeline can be stopped exactly after a chosen page is checkpointed.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding']);

export interface PageGate {
  url: string;
  /** From now on, answer this many more companies pages, then hold the next request. */
  allow(pages: number): void;
  /** The domains of each companies page answered through the gate, in order. */
  readonly pages: string[][];
  close(): Promise<void>;
}

export async function startPageGate(upstream: string): Promise<PageGate> {
  let allowed = Number.POSITIVE_INFINITY;
  const held: ServerResponse[] = [];
  const pages: string[][] = [];

  async function forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const isPage = request.url?.startsWith('/api/v1/companies') ?? false;
    if (isPage && allowed <= 0) {
      held.push(response);
      return;
    }
    if (isPage) allowed -= 1;
    const answer = await fetch(new URL(request.url ?? '/', upstream), {
      headers: { authorization: request.headers.authorization ?? '' },
    });
    const body = Buffer.from(await answer.arrayBuffer());
    if (isPage && answer.ok)
      pages.push(
        (JSON.parse(body.toString('utf8')) as { data: Array<{ domain: string }> }).data.map((row) => row.domain),
      );
    const headers = Object.fromEntries([...answer.headers].filter(([name]) => !HOP_BY_HOP.has(name)));
    response.writeHead(answer.status, headers).end(body);
  }

  const server = createServer((request, response) => {
    forward(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    allow(pageCount) {
      allowed = pageCount;
    },
    pages,
    async close() {
      for (const response of held.splice(0)) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The steps under an HTTP request, each timed on its own so a person can see which one fails or is
 * slow: the name looked up, the TCP connection, the TLS handshake (with the certificate it showed).
 * Through a proxy only the connection to the proxy is ours to time; the proxy looks the name up.
 */
import { lookup } from 'node:dns/promises';
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls, type PeerCertificate, type TLSSocket } from 'node:tls';

export interface Timed<T> {
  value: T;
  ms: number;
}

async function timed<T>(work: () => Promise<T>): Promise<Timed<T>> {
  const startedAt = performance.now();
  const value = await work();
  return { value, ms: Math.round(performance.now() - startedAt) };
}

/** A step that took longer than it may: a silent host, a black hole. */
class StepTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

function withDeadline<T extends Socket>(socket: T, timeoutMs: number, event: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new StepTimeoutError(`no ${event === 'connect' ? 'connection' : 'TLS handshake'} within ${timeoutMs / 1000} s`),
      );
    }, timeoutMs);
    socket.once(event, () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    });
  });
}

let abandoned = 0;
/** Lookups given up on and still pending: a getaddrinfo cannot be cancelled, and holds the process until it ends. */
export function abandonedLookups(): number {
  return abandoned;
}

/** The name's addresses, in the order the commands' connections try them; a slow answer is a DNS failure. */
function lookUp(host: string, timeoutMs: number): Promise<Timed<string[]>> {
  return timed(async () => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        abandoned += 1;
        answer.finally(() => (abandoned -= 1)).catch(() => undefined);
        reject(new StepTimeoutError(`no DNS answer within ${timeoutMs / 1000} s`));
      }, timeoutMs);
    });
    const answer = lookup(host, { all: true });
    try {
      return (await Promise.race([answer, late])).map((entry) => entry.address);
    } finally {
      clearTimeout(timer);
    }
  });
}

/** Connects to each address in turn until one answers; what failed before it, as `address: why`. */
export function connectToAny(
  addresses: readonly string[],
  port: number,
  timeoutMs: number,
): Promise<Timed<{ address: string; failed: string[] }>> {
  return timed(async () => {
    const failed: string[] = [];
    for (const address of addresses) {
      try {
        await connectTo(address, port, timeoutMs);
        return { address, failed };
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        const why = error instanceof Error ? error.message : String(error);
        failed.push(`${address}: ${why}${typeof code === 'string' && !why.includes(code) ? ` (${code})` : ''}`);
      }
    }
    throw new Error(`no address answered: ${failed.join('; ')}`);
  });
}

/** Connects, then closes at once. */
function connectTo(address: string, port: number, timeoutMs: number): Promise<Timed<void>> {
  return timed(async () => {
    const socket = await withDeadline(connectTcp({ host: address, port }), timeoutMs, 'connect');
    socket.destroy();
  });
}

interface Handshake {
  protocol: string;
  subject: string;
  issuer: string;
  validTo: string;
}

/** A TLS handshake with the address TCP reached, the name as the client sends it and the CAs the client trusts. */
function shakeHands(
  host: string,
  address: string,
  port: number,
  ca: readonly string[] | undefined,
  timeoutMs: number,
): Promise<Timed<Handshake>> {
  return timed(async () => {
    const options = {
      host: address,
      port,
      servername: host.includes(':') || /^[\d.]+$/.test(host) ? undefined : host,
      ...(ca ? { ca: [...ca] } : {}),
    };
    const socket = await withDeadline<TLSSocket>(connectTls(options), timeoutMs, 'secureConnect');
    const certificate: PeerCertificate = socket.getPeerCertificate();
    const handshake = {
      protocol: socket.getProtocol() ?? 'unknown',
      subject: certificate.subjectaltname ?? String(certificate.subject?.CN ?? 'unknown'),
      issuer: String(certificate.issuer?.CN ?? 'unknown'),
      validTo: certificate.valid_to ?? 'unknown',
    };
    socket.destroy();
    return handshake;
  });
}

/** The steps under a request, as doctor is given them: these, or a test's stand-ins for them. */
export interface NetworkSteps {
  lookUp: typeof lookUp;
  connectToAny: typeof connectToAny;
  shakeHands: typeof shakeHands;
}

export const NETWORK_STEPS: NetworkSteps = { lookUp, connectToAny, shakeHands };

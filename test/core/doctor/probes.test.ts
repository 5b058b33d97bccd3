/**
 * doctor's steps (src/core/doctor/probes.ts) on real loopback sockets: TCP tries every address the
 * name has, in order, and says which answered and why the others did not.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectToAny } from '../../../src/core/doctor/probes.js';

let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('connectToAny', () => {
  it('a first address that refuses: the second answers, and the first is named with why', async () => {
    // Only 127.0.0.1 listens: 127.0.0.2 (this machine too) refuses the port, as a dead IPv6 address does.
    const tcp = await connectToAny(['127.0.0.2', '127.0.0.1'], port, 3000);
    expect(tcp.value.address).toBe('127.0.0.1');
    expect(tcp.value.failed).toHaveLength(1);
    expect(tcp.value.failed[0]).toMatch(/^127\.0\.0\.2: .*ECONNREFUSED/);
  });

  it('no address answers: one error naming each', async () => {
    await expect(connectToAny(['127.0.0.2', '127.0.0.3'], port, 3000)).rejects.toThrow(
      /^no address answered: 127\.0\.0\.2: .*ECONNREFUSED.*; 127\.0\.0\.3: .*ECONNREFUSED/,
    );
  });
});

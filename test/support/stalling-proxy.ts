import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server (the shared PostgreSQL) that can stop forwarding: after `stall()`
 * the bytes of every connection, old or new, are held in the proxy in both directions, as a hung
 * server or a dead network path would hold them; `resume()` forwards them, nothing lost.
 */
export interface StallingProxy {
  port: number;
  stall(): void;
  resume(): void;
  close(): Promise<void>;
}

export async function startStallingProxy(targetHost: string, targetPort: number): Promise<StallingProxy> {
  const sockets = new Set<Socket>();
  const held: { to: Socket; chunk: Buffer }[] = [];
  let stalled = false;
  const forward = (from: Socket, to: Socket) => {
    sockets.add(from);
    from.on('close', () => {
      sockets.delete(from);
      to.destroy();
    });
    from.on('error', () => from.destroy());
    from.on('data', (chunk: Buffer) => {
      if (stalled) held.push({ to, chunk });
      else to.write(chunk);
    });
  };
  const server = createServer((client) => {
    const upstream = connect(targetPort, targetHost);
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  return {
    port: (server.address() as AddressInfo).port,
    stall() {
      stalled = true;
    },
    resume() {
      stalled = false;
      for (const { to, chunk } of held.splice(0)) if (!to.destroyed) to.write(chunk);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolveClose) => server.close(resolveClose));
    },
  };
}

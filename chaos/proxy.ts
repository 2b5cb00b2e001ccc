/**
 * A TCP proxy on 127.0.0.1 that cuts every connection after about a second. Each new
 * connection goes to one of the current upstream ports (servers come and go during the run).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Proxy {
  port: number;
  setUpstreams(ports: number[]): void;
  close(): Promise<void>;
}

export async function startProxy(random: () => number, cutMs = 1000): Promise<Proxy> {
  let upstreams: number[] = [];
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    const port = upstreams[Math.floor(random() * upstreams.length)];
    if (port === undefined) return void client.destroy();
    const upstream = connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    const cut = setTimeout(
      () => {
        client.destroy();
        upstream.destroy();
      },
      cutMs * (0.7 + random() * 0.6),
    );
    client.on('close', () => {
      clearTimeout(cut);
      upstream.destroy();
    });
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    setUpstreams: (ports) => (upstreams = ports),
    close: () =>
      new Promise((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

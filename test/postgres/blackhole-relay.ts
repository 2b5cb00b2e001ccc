import net from 'node:net';

/**
 * A TCP relay between a client and a server that the test can cut. Cut ("blackhole"), every
 * socket stays open and no byte crosses in either direction; they are held, as TCP holds
 * unacknowledged bytes, and delivered in order at the heal (a partition shorter than TCP's
 * own give-up time). New connections are accepted during the cut and wait the same way.
 * The minimum this suite needs; the general kit (pass, blackhole, reset, latency) is
 * test/helpers/tcp-relay.ts once it lands.
 */
export class BlackholeRelay {
  readonly #server: net.Server;
  readonly #sockets = new Set<net.Socket>();
  readonly #held: (() => void)[] = [];
  #cut = false;
  /** Bytes the cut has held back since the last heal. */
  heldBytes = 0;

  private constructor(server: net.Server) {
    this.#server = server;
  }

  static async start(target: { host: string; port: number }): Promise<BlackholeRelay> {
    const server = net.createServer();
    const relay = new BlackholeRelay(server);
    server.on('connection', (client) => relay.#carry(client, target));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  get port(): number {
    return (this.#server.address() as net.AddressInfo).port;
  }

  blackhole(): void {
    this.#cut = true;
  }

  heal(): void {
    this.#cut = false;
    this.heldBytes = 0;
    for (const deliver of this.#held.splice(0)) deliver();
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #carry(client: net.Socket, target: { host: string; port: number }): void {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      this.#sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.#sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    this.#forward(client, upstream);
    this.#forward(upstream, client);
  }

  #forward(from: net.Socket, to: net.Socket): void {
    from.on('data', (chunk: Buffer) => {
      if (!this.#cut) {
        to.write(chunk);
        return;
      }
      this.heldBytes += chunk.length;
      this.#held.push(() => to.write(chunk));
    });
  }
}

import {
  startTcpRelay,
  type RelayMode,
  type RelayOptions,
  type TcpRelay,
} from '../helpers/tcp-relay.js';

/**
 * One relay per Redis Cluster node, switched together: a process whose every node address is
 * mapped through them (TASKRAIL_TEST_NAT_MAP, see test/fixtures/cluster-nat.ts) is cut off
 * from the whole cluster at once. `urlFor` points at the first node's relay.
 */
export interface RelayGroup extends TcpRelay {
  /** `{"127.0.0.1:NODE_PORT": {host, port: RELAY_PORT}}` for ioredis's natMap. */
  natMap(): Record<string, { host: string; port: number }>;
  /** The relay of one node alone, to cut this process off that node only. */
  node(nodePort: number): TcpRelay;
}

export async function startRelayGroup(
  nodePorts: number[],
  options: RelayOptions = {},
): Promise<RelayGroup> {
  const relays = await Promise.all(nodePorts.map((port) => startTcpRelay({ port }, options)));
  const first = relays[0] as TcpRelay;
  return {
    host: '127.0.0.1',
    port: first.port,
    get mode() {
      return first.mode;
    },
    get openConnections() {
      return relays.reduce((sum, relay) => sum + relay.openConnections, 0);
    },
    get droppedBytes() {
      return relays.reduce((sum, relay) => sum + relay.droppedBytes, 0);
    },
    urlFor: (url) => first.urlFor(url),
    setMode(mode: RelayMode, latencyMs?: number) {
      for (const relay of relays) relay.setMode(mode, latencyMs);
    },
    async close() {
      await Promise.all(relays.map((relay) => relay.close()));
    },
    node(nodePort) {
      const relay = relays[nodePorts.indexOf(nodePort)];
      if (relay === undefined) throw new Error(`no relay for cluster node ${nodePort}`);
      return relay;
    },
    natMap: () =>
      Object.fromEntries(
        nodePorts.map((port, i) => [
          `127.0.0.1:${port}`,
          { host: '127.0.0.1', port: (relays[i] as TcpRelay).port },
        ]),
      ),
  };
}

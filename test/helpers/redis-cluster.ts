import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { waitFor } from './wait.js';
import { portIsFree } from './ports.js';

/**
 * A throwaway Redis Cluster on loopback: `masters` masters, each with `replicasPerMaster`
 * replicas, in a temporary folder, on free ports. Started by the test that needs it and
 * killed by `stop()`; nothing is shared with the Redis other tests use.
 */
export interface LocalCluster {
  /** The store URL: the first node, `?cluster=1`. */
  url: string;
  ports: number[];
  /** `redis-cli -p PORT ARGS…`, its output (throws on a non-zero exit). */
  cli(port: number, ...args: string[]): string;
  /** The port of the master serving `slot`, and of one of its replicas. */
  ownerOf(slot: number): { master: number; replica: number | undefined };
  /** SIGKILLs one node's process. */
  kill(port: number): void;
  stop(): Promise<void>;
}

export const NO_REDIS_SERVER = 'redis-server is not installed (apt-get install redis-server)';

/** Registers one skipped test that says why when there is no redis-server to start. */
export function skipWithoutRedisServer(suite: string): boolean {
  const found = spawnSync('redis-server', ['--version']).status === 0;
  if (found) return false;
  process.stdout.write(`# skipping ${suite}: ${NO_REDIS_SERVER}\n`);
  test(suite, { skip: NO_REDIS_SERVER }, () => undefined);
  return true;
}

/** A port whose cluster bus port (+10000) is free as well. */
async function freePorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 30_000);
    if (ports.includes(port) || ports.includes(port + 10_000) || ports.includes(port - 10_000))
      continue;
    if ((await portIsFree(port)) && (await portIsFree(port + 10_000))) ports.push(port);
  }
  return ports;
}

export async function startCluster(masters = 3, replicasPerMaster = 1): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-cluster-'));
  const ports = await freePorts(masters * (1 + replicasPerMaster));
  const processes = new Map<number, ChildProcess>();
  for (const port of ports) {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '1500',
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'no',
        '--maxmemory-policy',
        'noeviction',
        // DEBUG SLEEP freezes a node, as a stalled or crashed master looks to the cluster.
        '--enable-debug-command',
        'local',
      ],
      { stdio: 'ignore' },
    );
    processes.set(port, child);
  }
  const cli = (port: number, ...args: string[]): string => {
    const result = spawnSync('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  await waitFor('the cluster nodes to listen', () =>
    ports.every((port) => {
      try {
        return cli(port, 'PING').trim() === 'PONG';
      } catch {
        return false;
      }
    }),
  );
  const create = spawnSync(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      String(replicasPerMaster),
      '--cluster-yes',
    ],
    { encoding: 'utf8' },
  );
  if (create.status !== 0) throw new Error(`redis-cli --cluster create: ${create.stdout}`);
  await waitFor(
    'every node to see the cluster ok, with its replicas attached',
    () =>
      ports.every((port) => cli(port, 'CLUSTER', 'INFO').includes('cluster_state:ok')) &&
      slotsOwners(cli, ports[0] as number).every(
        (range) => range.replicas.length === replicasPerMaster,
      ),
    { timeoutMs: 30_000 },
  );
  return {
    url: `redis://127.0.0.1:${ports[0]}?cluster=1`,
    ports,
    cli,
    ownerOf(slot) {
      for (const port of ports) {
        try {
          const range = slotsOwners(cli, port).find((r) => r.from <= slot && slot <= r.to);
          if (range !== undefined) return { master: range.master, replica: range.replicas[0] };
        } catch {
          // a killed node: ask the next one
        }
      }
      throw new Error(`no node serves slot ${slot}`);
    },
    kill(port) {
      processes.get(port)?.kill('SIGKILL');
    },
    async stop() {
      await Promise.all(
        [...processes.values()].map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGKILL');
            }),
        ),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface SlotRange {
  from: number;
  to: number;
  master: number;
  replicas: number[];
}

/** CLUSTER SHARDS would be tidier; CLUSTER SLOTS's nesting survives redis-cli's plain output. */
function slotsOwners(cli: LocalCluster['cli'], port: number): SlotRange[] {
  const out = cli(port, '--json', 'CLUSTER', 'SLOTS');
  const ranges = JSON.parse(out) as Array<[number, number, ...Array<[string, number, string]>]>;
  return ranges.map(([from, to, ...nodes]) => ({
    from,
    to,
    master: nodes[0]?.[1] ?? 0,
    replicas: nodes.slice(1).map((replica) => replica[1]),
  }));
}

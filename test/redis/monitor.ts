import { once } from 'node:events';
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { waitFor } from '../helpers/wait.js';
import { REDIS_URL } from './redis-env.js';

export interface CommandWatch {
  /** MONITOR lines naming `prefix`, in order (commands run inside scripts excluded). */
  seen: string[];
  stop(): void;
}

/**
 * What clients send that names `prefix`, as MONITOR lines. A raw socket: an ioredis client in
 * monitor mode can trip over replies arriving at once.
 */
export async function watchCommands(prefix: string): Promise<CommandWatch> {
  const { hostname, port } = new URL(REDIS_URL as string);
  const socket = connect(Number(port || 6379), hostname);
  await once(socket, 'connect');
  socket.write('MONITOR\r\n');
  const seen: string[] = [];
  let rest = '';
  socket.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString('utf8')).split('\r\n');
    rest = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes(' lua] ') && line.includes(prefix)) seen.push(line);
    }
  });
  return { seen, stop: () => socket.destroy() };
}

/** What `work` sends: between two fences (a command only the caller sends) seen by MONITOR. */
export async function commandsSentBy(
  prefix: string,
  work: () => Promise<unknown>,
): Promise<string[]> {
  const watch = await watchCommands(prefix);
  const pinger = new Redis(REDIS_URL as string);
  const fence = async (name: string): Promise<number> => {
    const key = `${prefix}:fence:${name}`;
    await pinger.exists(key);
    const at = () => watch.seen.findIndex((line) => line.includes(`"${key}"`)) + 1;
    return waitFor(`MONITOR to see ${name}`, at);
  };
  try {
    const from = await fence('start');
    await work();
    const to = await fence('end');
    return watch.seen.slice(from, to - 1);
  } finally {
    pinger.disconnect();
    watch.stop();
  }
}

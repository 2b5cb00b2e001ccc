import { Cluster, Redis } from 'ioredis';
import type { TaskStore } from '../../store/port.js';
import { EventRelay } from '../shared/event-relay.js';
import type { RedisClient } from './scripts.js';

/**
 * Re-emits the writes of other replicas through this store's events. Messages are change
 * notices (ids and what changed, see codec.ts); the relay reads a record back only when
 * someone listens. Our own writes were emitted when made, so messages with our origin are
 * skipped.
 */
export async function subscribeEvents(
  subscriber: RedisClient,
  channel: string,
  origin: string,
  store: TaskStore,
  warn: (message: string) => void,
): Promise<void> {
  const relay = new EventRelay(store, `{"o":${JSON.stringify(origin)},`, (message) =>
    warn(`${message} on ${channel}`),
  );
  subscriber.on('message', (from: string, message: string) => {
    if (from === channel) relay.receive(message);
  });
  // Messages published while the connection was down are gone: listeners re-read once the
  // subscription is back. ioredis's own resubscription (a Cluster's) leaves its promise
  // unhandled, so a close during it was an unhandled rejection; a single Redis's subscriber
  // (`autoResubscribe: false`) subscribes again here.
  const resubscribes = subscriber instanceof Redis && subscriber.options.autoResubscribe === false;
  let lost = false;
  subscriber.on('close', () => (lost = true));
  subscriber.on('ready', () => {
    if (!lost) return;
    lost = false;
    if (!resubscribes) {
      store.events.emit('store:resync', {});
      return;
    }
    subscriber.subscribe(channel).then(
      () => store.events.emit('store:resync', {}),
      () => undefined, // closed again: the next 'ready' subscribes again
    );
  });
  await subscriber.subscribe(channel);
}

/**
 * On a Cluster, a failover can lose change notices: those a frozen or crashed master was to
 * relay, and the writes it acknowledged but never replicated (see replica-acks.ts). When the set
 * of masters changes (seen on a slot-map refresh: after a MOVED, or every 5 s, see connect.ts),
 * listeners re-read what they follow (`store:resync`), as after a lost subscription.
 */
export function resyncOnFailover(redis: RedisClient, store: TaskStore): void {
  if (!(redis instanceof Cluster)) return;
  const masters = () =>
    redis
      .nodes('master')
      .map((node) => `${node.options.host ?? ''}:${node.options.port ?? ''}`)
      .sort()
      .join(',');
  let known = masters();
  redis.on('refresh', () => {
    const now = masters();
    if (now === known) return;
    known = now;
    store.events.emit('store:resync', {});
  });
}

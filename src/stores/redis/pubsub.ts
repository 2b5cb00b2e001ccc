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
  // ioredis subscribes again on reconnection; messages published meanwhile are gone.
  let lost = false;
  subscriber.on('close', () => (lost = true));
  subscriber.on('ready', () => {
    if (!lost) return;
    lost = false;
    store.events.emit('store:resync', {});
  });
  await subscriber.subscribe(channel);
}

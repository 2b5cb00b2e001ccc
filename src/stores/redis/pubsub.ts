import type { Redis } from 'ioredis';
import type { TaskEvents } from '../../store/events.js';
import { recordOf, type WireEvent } from './codec.js';

/**
 * Re-emits the writes of other replicas through this store's `TaskEvents`. Our own writes are
 * emitted locally right after the script returns, so messages carrying our origin are skipped.
 */
export async function subscribeEvents(
  subscriber: Redis,
  channel: string,
  origin: string,
  events: TaskEvents,
  warn: (message: string) => void,
): Promise<void> {
  const ownPrefix = `{"o":${JSON.stringify(origin)},`;
  subscriber.on('message', (from: string, message: string) => {
    // Our own writes come back too; skip them before paying for a parse of the whole record.
    if (from !== channel || message.startsWith(ownPrefix)) return;
    let event: WireEvent;
    try {
      event = JSON.parse(message) as WireEvent;
    } catch {
      warn(`ignoring a malformed message on ${channel}`);
      return;
    }
    deliver(event, events);
  });
  // ioredis subscribes again on reconnection; messages published meanwhile are gone.
  let lost = false;
  subscriber.on('close', () => (lost = true));
  subscriber.on('ready', () => {
    if (!lost) return;
    lost = false;
    events.emit('store:resync', {});
  });
  await subscriber.subscribe(channel);
}

function deliver(event: WireEvent, events: TaskEvents): void {
  switch (event.k) {
    case 'created':
      events.emit('task:created', { task: recordOf(event) });
      return;
    case 'write':
      events.emitWrite(recordOf(event), event.p);
      return;
    case 'deleted':
      events.emit('task:deleted', { id: event.id });
      return;
  }
}

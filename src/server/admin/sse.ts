import { sseComment, sseEvent, webSse } from '../http/sse.js';
import type { AdminFeed, FeedMessage } from './feed.js';

const PING_MS = 20_000;
const RETRY_MS = 2000;

function frame(message: FeedMessage): string {
  const data = message.type === 'task' ? message.task : { id: message.id };
  return sseEvent(message.type, JSON.stringify(data));
}

/**
 * A Server-Sent Events stream of the feed. The dashboard reads it with `fetch` (so the admin
 * token travels in the Authorization header, never in a URL); the comment pings keep proxies
 * from closing an idle stream. Ends when the client goes away or `signal` fires.
 */
export function feedStream(feed: AdminFeed, signal: AbortSignal, pollMs: number): Response {
  let cleanup = (): void => undefined;
  const sse = webSse(() => cleanup());
  const unsubscribe = feed.subscribe((message) => sse.write(frame(message)));
  const ping = setInterval(() => sse.write(sseComment('ping')), PING_MS);
  ping.unref();
  const stop = (): void => {
    cleanup();
    sse.close();
  };
  cleanup = () => {
    clearInterval(ping);
    unsubscribe();
    signal.removeEventListener('abort', stop);
  };
  signal.addEventListener('abort', stop);
  sse.write(sseEvent('hello', JSON.stringify({ pollMs }), RETRY_MS));
  return new Response(sse.body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    },
  });
}

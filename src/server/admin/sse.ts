import type { AdminFeed, FeedMessage } from './feed.js';

const PING_MS = 20_000;

function frame(message: FeedMessage): string {
  const data = message.type === 'task' ? message.task : { id: message.id };
  return `event: ${message.type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * A Server-Sent Events stream of the feed. The dashboard reads it with `fetch` (so the admin
 * token travels in the Authorization header, never in a URL); the comment pings keep proxies
 * from closing an idle stream. Ends when the client goes away or `signal` fires.
 */
export function feedStream(feed: AdminFeed, signal: AbortSignal, pollMs: number): Response {
  const encoder = new TextEncoder();
  let cleanup = (): void => undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const send = (text: string): void => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          cleanup();
        }
      };
      const unsubscribe = feed.subscribe((message) => send(frame(message)));
      const ping = setInterval(() => send(': ping\n\n'), PING_MS);
      ping.unref();
      const stop = (): void => {
        cleanup();
        try {
          controller.close();
        } catch {
          // already closed
        }
      };
      cleanup = () => {
        clearInterval(ping);
        unsubscribe();
        signal.removeEventListener('abort', stop);
      };
      signal.addEventListener('abort', stop);
      send(`retry: 2000\nevent: hello\ndata: ${JSON.stringify({ pollMs })}\n\n`);
    },
    cancel() {
      cleanup();
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    },
  });
}

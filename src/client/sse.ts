/**
 * Reads JSON-RPC messages from a `text/event-stream` response body, one per SSE event, until
 * `stop` says the awaited message arrived. Comment lines (`:` keep-alives) and non-JSON data are
 * skipped. Written by hand because the 2026-07-28 stream is request-scoped and we stop reading
 * as soon as our response arrives.
 */
export async function readSseMessages(
  body: ReadableStream<Uint8Array>,
  stop: (message: unknown) => boolean,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const events = buffer.split(/\r?\n\r?\n/);
      buffer = done ? '' : (events.pop() ?? '');
      for (const event of events) {
        const message = parseEvent(event);
        if (message !== undefined && stop(message)) return;
      }
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function parseEvent(event: string): unknown {
  const data = event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''))
    .join('\n');
  if (data === '') return undefined;
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return undefined;
  }
}

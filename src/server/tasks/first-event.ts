import { timerDelay } from '../../task/timers.js';
/** An SSE body read up to the end of its first event, and the whole body again to send on. */
export interface PeekedStream {
  /** The first event's data, or undefined when none was complete in time (or the body ended). */
  data: string | undefined;
  /** Every byte of the body, the ones already read first. */
  body: ReadableStream<Uint8Array>;
}

/** The data lines of one SSE event (`data: …`), joined as the spec says; undefined if none. */
function eventData(event: string): string | undefined {
  const lines = event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
  return lines.length === 0 ? undefined : lines.join('\n');
}

/**
 * Reads `stream` until its first event is complete, for at most `waitMs`, so that a caller can
 * still choose the HTTP status from it: nothing has been sent while it reads.
 */
export async function peekFirstEvent(
  stream: ReadableStream<Uint8Array>,
  waitMs: number,
): Promise<PeekedStream> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const seen: Uint8Array[] = [];
  let text = '';
  let ended = false;
  let pending: ReturnType<typeof reader.read> | undefined;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>(
    (resolve) => (timer = setTimeout(resolve, timerDelay(waitMs), 'late')),
  );
  try {
    while (!/\r?\n\r?\n/.test(text)) {
      pending ??= reader.read();
      const next = await Promise.race([pending, late]);
      if (next === 'late') break;
      pending = undefined;
      if (next.done) {
        ended = true;
        break;
      }
      seen.push(next.value);
      text += decoder.decode(next.value, { stream: true });
    }
  } finally {
    clearTimeout(timer);
  }
  const end = text.search(/\r?\n\r?\n/);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of seen) controller.enqueue(chunk);
      if (ended) controller.close();
    },
    async pull(controller) {
      const next = await (pending ?? reader.read());
      pending = undefined;
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { data: end < 0 ? undefined : eventData(text.slice(0, end)), body };
}

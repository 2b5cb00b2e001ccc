import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelayMs, type Backoff } from '../task/backoff.js';
import { isClientError } from './errors.js';
import type { OutputPush } from './push-notes.js';
import { PAGE_CHARS, withRange, type ReadPage } from './resources.js';
import { timerDelay } from '../task/timers.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
/** Riding out a restart: 100 ms, 200 ms, … up to 2 s between tries. */
const RIDE_OUT: Backoff = { backoffMs: 100, maxBackoffMs: 2000 };
const MAX_PAGES = 100_000;
/** Once the task is known to have ended, how long its last update may take before a read. */
const LAST_UPDATE_MS = 2000;
/** With a live push, a `tasks/get` every this many poll intervals is the safety net. */
const SAFETY_POLLS = 5;

/** What following a task's output needs from the connection. */
export interface OutputSource {
  read: ReadPage;
  /** True once the task is terminal (its output can no longer grow). */
  ended(signal?: AbortSignal): Promise<boolean>;
  /** The resource's updates pushed by the server, when the wire offers a subscription. */
  push?: OutputPush;
}

export interface FollowOptions {
  /** Start here instead of at the beginning (UTF-16 code units of the whole stream). */
  offset?: number;
  /** Between reads when nothing is pushed; default 1 s. */
  pollIntervalMs?: number;
  /** Stops following (the iterator ends without error). */
  signal?: AbortSignal;
  /** Says the caller has seen the task end: the last of its output is awaited, then the end. */
  wake?: AbortSignal;
  /** Once the server answered, how long a dropped connection (a restart) is ridden out; 10 s. */
  connectionGraceMs?: number;
}

/** What to do after a wait: read what is new, stop (nothing more will come), or poll on. */
type News = 'read' | 'done' | 'lost';

/**
 * Yields a task's output as it grows, chunk by chunk, until the task has ended and its output
 * is read to the end. With a push, the first read comes once the subscription is confirmed and
 * later ones only when an update says the text grew past what was read (so a task that writes
 * nothing costs one read); without one, a read every poll interval. Each read's page says the
 * task's status, and a read that finds the task ended has everything it wrote.
 */
export async function* followOutputOf(
  source: OutputSource,
  uri: string,
  options: FollowOptions = {},
): AsyncGenerator<string, void, undefined> {
  const { signal } = options;
  const poll = options.pollIntervalMs ?? 1000;
  let offset = options.offset ?? 0;
  source = ridingOut(source, options.connectionGraceMs ?? 10_000);
  try {
    let push =
      source.push !== undefined && (await source.push.ready(signal)) ? source.push : undefined;
    for (;;) {
      if (signal?.aborted === true) return;
      const rest = await readRest(source, uri, offset, signal);
      offset = rest.offset;
      if (rest.text !== '') yield rest.text;
      if (rest.ended) return;
      const news =
        push === undefined
          ? await pollWait(poll, options)
          : await pushWait(push, source, () => offset, poll, options);
      if (news === 'done') return;
      if (news === 'lost') push = undefined;
    }
  } catch (error) {
    if (signal?.aborted === true) return;
    throw error;
  } finally {
    source.push?.close();
  }
}

/**
 * The source with its reads sent again, with backoff, after a dropped connection once the
 * server has answered one: a restart is ridden out until `graceMs` after the first failure.
 */
function ridingOut(source: OutputSource, graceMs: number): OutputSource {
  let reached = false;
  async function ride<T>(send: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let graceEnds: number | undefined;
    for (let retry = 1; ; retry += 1) {
      try {
        const value = await send();
        reached = true;
        return value;
      } catch (error) {
        if (!reached || !isClientError(error, 'CONNECTION') || signal?.aborted === true)
          throw error;
        graceEnds ??= Date.now() + graceMs;
        if (Date.now() > graceEnds) throw error;
        await sleep(backoffDelayMs(RIDE_OUT, retry), undefined, signal ? { signal } : {});
      }
    }
  }
  return {
    ...source,
    read: (uri, signal) => ride(() => source.read(uri, signal), signal),
    ended: (signal) => ride(() => source.ended(signal), signal),
  };
}

/**
 * Reads from `offset` to the end, page by page, and whether the task had ended by then (the
 * last page's status; a server that does not say is asked with `ended` and read once more).
 */
async function readRest(
  source: OutputSource,
  uri: string,
  offset: number,
  signal: AbortSignal | undefined,
): Promise<{ text: string; offset: number; ended: boolean }> {
  const parts: string[] = [];
  let status: string | undefined;
  for (let n = 0; n < MAX_PAGES; n++) {
    const page = await source.read(withRange(uri, { offset, length: PAGE_CHARS }), signal);
    status = page.status;
    if (page.text === '') break;
    parts.push(page.text);
    offset = page.nextOffset ?? offset + page.text.length;
    if (page.total !== undefined && offset >= page.total) break;
  }
  const text = parts.join('');
  if (status !== undefined) return { text, offset, ended: TERMINAL.has(status) };
  if (!(await source.ended(signal))) return { text, offset, ended: false };
  const last = await readRest({ ...source, ended: async () => true }, uri, offset, signal);
  return { text: text + last.text, offset: last.offset, ended: true };
}

async function pollWait(poll: number, options: FollowOptions): Promise<News> {
  const signal = waitSignal(options.signal, options.wake);
  if (signal?.aborted !== true) {
    await sleep(timerDelay(poll), undefined, signal === undefined ? {} : { signal }).catch(
      () => undefined,
    );
  }
  return 'read';
}

/**
 * Waits for an update that says the text grew past `offset()` ('read'), or says the task ended
 * with nothing new ('done'). Once the task is known to have ended (the caller's `wake`, or the
 * safety net's `tasks/get`), its last update gets `LAST_UPDATE_MS` before a read anyway.
 */
async function pushWait(
  push: OutputPush,
  source: OutputSource,
  offset: () => number,
  poll: number,
  options: FollowOptions,
): Promise<News> {
  const { signal } = options;
  const stopped = (): boolean => signal?.aborted === true;
  let endSeen = options.wake?.aborted === true;
  for (;;) {
    if (stopped()) return 'done';
    const wait = endSeen ? LAST_UPDATE_MS : poll * SAFETY_POLLS;
    const note = await push.next(wait, waitSignal(signal, endSeen ? undefined : options.wake));
    if (note === undefined) {
      if (stopped()) return 'done';
      if (endSeen) return 'read';
      endSeen = options.wake?.aborted === true || (await source.ended(signal));
      continue;
    }
    if (note.lost) return 'lost';
    if (note.unsure || (note.total ?? -1) > offset()) return 'read';
    if (note.ended) return 'done';
  }
}

function waitSignal(stop?: AbortSignal, wake?: AbortSignal): AbortSignal | undefined {
  if (wake === undefined || wake.aborted) return stop;
  return stop === undefined ? wake : AbortSignal.any([stop, wake]);
}

import type { TaskRecord } from '../../task/record.js';
import { isoTime } from '../../task/time.js';

/** One line of a task's timeline. `derived` entries come from the record, not from an event. */
export interface TimelineEntry {
  at: string;
  kind: 'created' | 'status' | 'progress' | 'answer' | 'retry';
  status: string;
  from?: string;
  message?: string;
  revision: number;
  source: 'event' | 'poll' | 'derived';
  /** `answer` entries: the question's key, who answered, and the answer (shortened). */
  key?: string;
  by?: { role: 'operator' | 'caller'; name: string };
  answer?: string;
}

interface Seen {
  revision: number;
  status: string;
  message: string | undefined;
  answered: string[];
  attempt: number;
  entries: TimelineEntry[];
}

export interface JournalLimits {
  maxTasks: number;
  maxEntriesPerTask: number;
}

const DEFAULT_LIMITS: JournalLimits = { maxTasks: 5000, maxEntriesPerTask: 50 };
const MAX_ANSWER_CHARS = 200;
const MAX_PENDING_CREDITS = 1000;

/**
 * A bounded, in-memory journal of what this process saw happen to tasks: the last revision of
 * each (so re-lists send only changes) and a per-task timeline built from store events. It is
 * a view, not the truth: tasks older than the process get a timeline derived from the record.
 */
export class TaskJournal {
  readonly #seen = new Map<string, Seen>();
  /** Task id → operator about to answer it from the dashboard (credited when the answer lands). */
  readonly #credits = new Map<string, string>();
  readonly #limits: JournalLimits;

  constructor(limits: Partial<JournalLimits> = {}) {
    this.#limits = { ...DEFAULT_LIMITS, ...limits };
  }

  /** Records a version of a task; true when it is newer than anything seen before. */
  observe(task: TaskRecord, source: 'event' | 'poll'): boolean {
    const seen = this.#seen.get(task.id);
    if (seen !== undefined && seen.revision >= task.revision) return false;
    if (seen === undefined) this.#remember(task, source);
    else this.#append(seen, task, source);
    return true;
  }

  forget(id: string): void {
    this.#seen.delete(id);
    this.#credits.delete(id);
  }

  /** The next answers seen for this task were given by this operator, not by the caller. */
  creditAnswer(id: string, operator: string): void {
    this.#credits.delete(id);
    this.#credits.set(id, operator);
    if (this.#credits.size > MAX_PENDING_CREDITS) {
      const oldest = this.#credits.keys().next().value;
      if (oldest !== undefined) this.#credits.delete(oldest);
    }
  }

  /** Drops a credit whose answer was refused, so it cannot name the wrong person later. */
  uncreditAnswer(id: string): void {
    this.#credits.delete(id);
  }

  timeline(task: TaskRecord): { entries: TimelineEntry[]; source: 'events' | 'derived' } {
    const seen = this.#seen.get(task.id);
    if (seen === undefined) return { entries: derivedEntries(task), source: 'derived' };
    const live = seen.entries.some((entry) => entry.source !== 'derived');
    return { entries: [...seen.entries], source: live ? 'events' : 'derived' };
  }

  get size(): number {
    return this.#seen.size;
  }

  #remember(task: TaskRecord, source: 'event' | 'poll'): void {
    const entries =
      task.revision === 1 && source === 'event'
        ? [entry(task, 'created', task.createdAt, source)]
        : derivedEntries(task);
    this.#seen.set(task.id, { ...snapshot(task), entries });
    if (this.#seen.size > this.#limits.maxTasks) {
      const oldest = this.#seen.keys().next().value;
      if (oldest !== undefined) this.#seen.delete(oldest);
    }
  }

  #append(seen: Seen, task: TaskRecord, source: 'event' | 'poll'): void {
    const lines = this.#answerEntries(seen, task, source);
    const kind = changeKind(seen, task);
    if (kind !== undefined) {
      const line = entry(task, kind, task.updatedAt, source);
      if (kind === 'status') line.from = seen.status;
      lines.push(line);
    }
    seen.entries.push(...lines);
    const excess = seen.entries.length - this.#limits.maxEntriesPerTask;
    if (excess > 0) seen.entries.splice(1, excess);
    Object.assign(seen, snapshot(task));
  }

  #answerEntries(seen: Seen, task: TaskRecord, source: 'event' | 'poll'): TimelineEntry[] {
    const fresh = Object.keys(task.inputResponses).filter((key) => !seen.answered.includes(key));
    if (fresh.length === 0) return [];
    const operator = this.#credits.get(task.id);
    this.#credits.delete(task.id);
    const by: TimelineEntry['by'] =
      operator === undefined
        ? { role: 'caller', name: task.principal }
        : { role: 'operator', name: operator };
    return fresh.map((key) => ({
      ...entry(task, 'answer', task.updatedAt, source),
      key,
      by,
      answer: shortened(JSON.stringify(task.inputResponses[key])),
    }));
  }
}

function snapshot(task: TaskRecord): Omit<Seen, 'entries'> {
  return {
    revision: task.revision,
    status: task.status,
    message: task.statusMessage,
    answered: Object.keys(task.inputResponses),
    attempt: task.attempt,
  };
}

function changeKind(seen: Seen, task: TaskRecord): TimelineEntry['kind'] | undefined {
  if (seen.status !== task.status) return 'status';
  if (seen.attempt !== task.attempt) return 'retry';
  if (seen.message !== task.statusMessage) return 'progress';
  return undefined;
}

function shortened(text: string): string {
  return text.length <= MAX_ANSWER_CHARS ? text : `${text.slice(0, MAX_ANSWER_CHARS - 1)}…`;
}

function entry(
  task: TaskRecord,
  kind: TimelineEntry['kind'],
  at: number,
  source: TimelineEntry['source'],
): TimelineEntry {
  return {
    at: isoTime(at),
    kind,
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { message: task.statusMessage }),
    revision: task.revision,
    source,
  };
}

/** What the record alone tells: when it was created, and its current status since `updatedAt`. */
function derivedEntries(task: TaskRecord): TimelineEntry[] {
  const created: TimelineEntry = {
    at: isoTime(task.createdAt),
    kind: 'created',
    status: 'working',
    revision: 1,
    source: 'derived',
  };
  if (task.revision === 1) return [created];
  const kind = task.status === 'working' ? 'progress' : 'status';
  return [created, entry(task, kind, task.updatedAt, 'derived')];
}

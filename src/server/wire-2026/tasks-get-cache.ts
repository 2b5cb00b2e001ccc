import type { JsonObject, TaskRecord } from '../../task/record.js';
import { taskResult } from '../tasks/operations.js';

/** Bounds: tasks remembered, and the longest answer kept (a large result is encoded each time). */
const MAX_TASKS = 1000;
const MAX_CHARS = 16 * 1024;

interface Answer {
  revision: number;
  createdAt: number;
  updatedAt: number;
  status: TaskRecord['status'];
  json: string;
}

/**
 * The serialized GetTaskResult of recently polled tasks, so that polling a task that has not
 * changed costs no encoding. An answer is reused only for the same revision (and creation and
 * update times, and status) of the same task: every store bumps the revision on each write (the
 * TaskStore contract), and the answer depends on nothing else but the server's constant
 * serverInfo. Oldest entry out first.
 */
export class TaskGetCache {
  readonly #answers = new Map<string, Answer>();
  readonly #serverInfo: JsonObject;

  constructor(serverInfo: JsonObject) {
    this.#serverInfo = serverInfo;
  }

  /** `JSON.stringify(taskResult('tasks/get', task, serverInfo))`, from memory when unchanged. */
  json(task: TaskRecord): string {
    const known = this.#answers.get(task.id);
    if (known !== undefined && isSameRevision(known, task)) return known.json;
    const json = JSON.stringify(taskResult('tasks/get', task, this.#serverInfo));
    this.#answers.delete(task.id);
    if (json.length > MAX_CHARS) return json;
    const { revision, createdAt, updatedAt, status } = task;
    this.#answers.set(task.id, { revision, createdAt, updatedAt, status, json });
    if (this.#answers.size > MAX_TASKS) {
      this.#answers.delete(this.#answers.keys().next().value as string);
    }
    return json;
  }
}

function isSameRevision(known: Answer, task: TaskRecord): boolean {
  return (
    known.revision === task.revision &&
    known.updatedAt === task.updatedAt &&
    known.createdAt === task.createdAt &&
    known.status === task.status
  );
}

const perServer = new WeakMap<JsonObject, TaskGetCache>();

/** The answers of one server, keyed by its serverInfo object (made once per server). */
export function taskGetCacheOf(serverInfo: JsonObject): TaskGetCache {
  let answers = perServer.get(serverInfo);
  if (answers === undefined) perServer.set(serverInfo, (answers = new TaskGetCache(serverInfo)));
  return answers;
}

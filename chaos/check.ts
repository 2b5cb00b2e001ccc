/** Judges a chaos phase: every task in the store against its arguments and what clients saw. */
import type { TaskStore } from '../src/store/port.js';
import type { TaskRecord } from '../src/task/record.js';
import { isTerminal } from '../src/task/status.js';
import { isRight, type Final, type Spec } from './expect.js';

export interface Counts {
  tasks: number;
  lost: number;
  duplicated: number;
  stuck: number;
  wrong: number;
  /** Informational: extra tasks created for one planned call (a lost create reply, retried). */
  extraCreations: number;
  notes: string[];
}

interface Seen {
  created: Map<string, number>;
  ended: Map<string, Final & { n: number }>;
  /** Planned calls a client never got a task for, with the last answer it got (if any). */
  uncreated: Map<number, string>;
}

/** Parses the JSON lines of every client process. */
export function readClientLines(lines: string[]): Seen {
  const seen: Seen = { created: new Map(), ended: new Map(), uncreated: new Map() };
  for (const line of lines) {
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(line) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (typeof event['created'] === 'string')
      seen.created.set(event['created'], Number(event['n']));
    if (typeof event['uncreated'] === 'number') {
      seen.uncreated.set(event['uncreated'], JSON.stringify(event['outcome'] ?? 'no answer'));
    }
    if (typeof event['end'] === 'string') {
      const final = event as unknown as Final & { n: number };
      seen.ended.set(event['end'], final);
    }
  }
  return seen;
}

export async function allTasks(store: TaskStore): Promise<TaskRecord[]> {
  const tasks: TaskRecord[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page += 1) {
    const result = await store.list({ limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    tasks.push(...result.tasks);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return tasks;
}

export function finalOf(task: TaskRecord): Final {
  const first = (task.result?.['content'] as { text?: string }[] | undefined)?.[0];
  return {
    status: task.status,
    ...(first?.text === undefined ? {} : { text: first.text }),
    ...(task.error === undefined ? {} : { error: task.error.message }),
  };
}

const same = (a: Final, b: Final) =>
  a.status === b.status && (a.status !== 'completed' || a.text === b.text);

export function judge(
  specs: Spec[],
  tasks: TaskRecord[],
  seen: Seen,
  terminalWrites?: Map<string, number>,
): Counts {
  const counts: Counts = {
    tasks: tasks.length,
    lost: 0,
    duplicated: 0,
    stuck: 0,
    wrong: 0,
    extraCreations: 0,
    notes: [],
  };
  const byId = new Map(tasks.map((task) => [task.id, task]));
  const perN = new Map<number, number>();
  for (const task of tasks) {
    const n = Number(task.arguments['n']);
    perN.set(n, (perN.get(n) ?? 0) + 1);
    const spec = specs.find((s) => s.n === n);
    const known = seen.created.has(task.id) || seen.ended.has(task.id);
    if (!isTerminal(task.status)) {
      // A task only its lost create reply knew of may wait for input forever: nobody asks.
      if (known || task.status === 'working') {
        counts.stuck += 1;
        counts.notes.push(`stuck ${task.id} ${task.tool} n=${n} ${task.status}`);
      }
      continue;
    }
    if (!isRight(task, finalOf(task), spec?.cancelAfterMs !== undefined)) {
      counts.wrong += 1;
      counts.notes.push(`wrong ${task.id} ${task.tool} n=${n} ${JSON.stringify(finalOf(task))}`);
    }
  }
  const expiring = new Set(specs.filter((spec) => spec.expires === true).map((spec) => spec.n));
  for (const spec of specs) {
    const made = perN.get(spec.n) ?? 0;
    if (made === 0 && !expiring.has(spec.n)) {
      counts.lost += 1;
      const answer = seen.uncreated.get(spec.n);
      const why =
        answer === undefined
          ? 'its client never reported on it'
          : `its client got no task, last answer ${answer.slice(0, 200)}`;
      counts.notes.push(`lost: no task for n=${spec.n} (${spec.kind}): ${why}`);
    }
    if (made > 1) counts.extraCreations += made - 1;
  }
  for (const id of new Set([...seen.created.keys(), ...seen.ended.keys()])) {
    if (!byId.has(id) && !expiring.has(seen.created.get(id) ?? Number.NaN)) {
      counts.lost += 1;
      counts.notes.push(`lost: ${id} known to a client, not in the store`);
    }
  }
  for (const [id, final] of seen.ended) {
    if (expiring.has(final.n)) continue;
    const task = byId.get(id);
    if (final.status === 'lost') {
      counts.lost += 1;
      counts.notes.push(`lost: a client was told ${id} does not exist`);
      continue;
    }
    if (task !== undefined && !same(final, finalOf(task))) {
      counts.duplicated += 1;
      counts.notes.push(
        `rewritten ${id}: client saw ${JSON.stringify(final)}, store has ${JSON.stringify(finalOf(task))}`,
      );
    }
  }
  for (const [id, writes] of terminalWrites ?? []) {
    if (writes > 1) {
      counts.duplicated += writes - 1;
      counts.notes.push(`${writes} terminal writes for ${id}`);
    }
  }
  return counts;
}

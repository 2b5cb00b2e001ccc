/**
 * Store throughput against a raw-driver baseline (bench/redis.ts, bench/postgres.ts): creates
 * and gets per second, one at a time and several in flight, rounds alternating which side
 * goes first so neither always meets a warmer server.
 */
import type { TaskStore } from '../../src/store/port.js';
import type { TaskRecord } from '../../src/task/record.js';
import { benchRecords } from './records.js';
import { median, spread } from './stats.js';

export type Op = 'create' | 'get';
export type Mode = 'sequential' | 'concurrent';

export interface Target {
  create(task: TaskRecord): Promise<unknown>;
  get(id: string): Promise<unknown>;
}

export interface Plan {
  rounds: number;
  writes: number;
  reads: number;
  inFlight: number;
}

export function storeTarget(store: TaskStore): Target {
  return { create: (task) => store.create(task), get: (id) => store.get(id) };
}

async function rate<T>(
  items: T[],
  inFlight: number,
  op: (item: T) => Promise<unknown>,
): Promise<number> {
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < items.length) await op(items[next++] as T);
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return items.length / ((performance.now() - started) / 1000);
}

async function measure(plan: Plan, target: Target, mode: Mode): Promise<Record<Op, number>> {
  const inFlight = mode === 'sequential' ? 1 : plan.inFlight;
  const tasks = benchRecords(plan.writes);
  const create = await rate(tasks, inFlight, (task) => target.create(task));
  const ids = Array.from(
    { length: plan.reads },
    (_, i) => (tasks[i % plan.writes] as TaskRecord).id,
  );
  const get = await rate(ids, inFlight, (id) => target.get(id));
  return { create, get };
}

/** Per-round rates, keyed `<mode> <op> <store|raw>`. */
export async function compareThroughput(
  plan: Plan,
  store: Target,
  raw: Target,
): Promise<Record<string, number[]>> {
  const samples: Record<string, number[]> = {};
  const add = (key: string, value: number) => (samples[key] ??= []).push(value);
  for (let round = 0; round < plan.rounds; round++) {
    for (const mode of ['sequential', 'concurrent'] as const) {
      const sides = [
        ['store', store],
        ['raw', raw],
      ] as const;
      for (const [side, target] of round % 2 === 0 ? sides : [...sides].reverse()) {
        const rates = await measure(plan, target, mode);
        add(`${mode} create ${side}`, rates.create);
        add(`${mode} get ${side}`, rates.get);
      }
    }
  }
  return samples;
}

export function storeRatio(samples: Record<string, number[]>, mode: Mode, op: Op): number {
  const of = (key: string) => samples[key] ?? [0];
  return median(of(`${mode} ${op} store`)) / median(of(`${mode} ${op} raw`));
}

/** The report rows: each operation's raw baseline, then the store beside it. */
export function throughputRows(
  plan: Plan,
  samples: Record<string, number[]>,
  labels: { raw: string; store: string },
): (string | number)[][] {
  const of = (key: string) => samples[key] ?? [0];
  return (['sequential', 'concurrent'] as const).flatMap((mode) =>
    (['create', 'get'] as const).flatMap((op) =>
      (['raw', 'store'] as const).map((side) => [
        `${op} (${mode === 'sequential' ? 'one at a time' : `${plan.inFlight} in flight`})`,
        labels[side],
        Math.round(median(of(`${mode} ${op} ${side}`))),
        spread(of(`${mode} ${op} ${side}`), 0),
        side === 'raw' ? 1 : storeRatio(samples, mode, op),
      ]),
    ),
  );
}

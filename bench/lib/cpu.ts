/**
 * CPU time per task, per process, for the scaling and lifecycle benchmarks. On a machine with
 * few cores a scaling ratio is bounded by arithmetic: if the store and the other processes
 * spend `x` ms of CPU per task beside the workers' `w`, two workers on `cores` cores cannot
 * drain faster than `cores / (w + x)` tasks per ms however well they distribute. CPU time moves
 * much less with the machine's load than wall time, so it is what before/after cuts are
 * judged by.
 */
import { processCpuNs } from './load.js';

/** A named group of processes whose CPU is summed (e.g. both workers). */
export type CpuGroups = Record<string, number[]>;

/** CPU milliseconds of each group since `start()`. */
export class CpuMeter {
  readonly #groups: CpuGroups;
  #start = new Map<string, number>();

  constructor(groups: CpuGroups) {
    this.#groups = groups;
  }

  start(): void {
    this.#start = new Map(Object.entries(this.#groups).map(([name, pids]) => [name, sum(pids)]));
  }

  /** Milliseconds of CPU per group since `start()`. */
  read(): Record<string, number> {
    return Object.fromEntries(
      Object.entries(this.#groups).map(([name, pids]) => [
        name,
        (sum(pids) - (this.#start.get(name) ?? 0)) / 1e6,
      ]),
    );
  }
}

function sum(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      total += processCpuNs(pid);
    } catch {
      // the process is gone (or not ours to read): it counts nothing
    }
  }
  return total;
}

/** Per-task CPU (ms) of each group: `cpuMs / tasks`. */
export function perTask(cpuMs: Record<string, number>, tasks: number): Record<string, number> {
  return Object.fromEntries(Object.entries(cpuMs).map(([name, ms]) => [name, ms / tasks]));
}

/**
 * The highest drain rate (tasks/s) `workers` worker processes can reach on `cores` cores when
 * each task costs `workerMs` of worker CPU (the workers' CPU summed, per task) and `otherMs` elsewhere (the store, the
 * observer): limited by the cores overall, by each worker's one JavaScript thread, and by a
 * single-threaded store (`storeMs`, e.g. Redis).
 */
export function drainCeiling(options: {
  workers: number;
  cores: number;
  workerMs: number;
  otherMs: number;
  storeMs?: number;
}): number {
  const { workers, cores, workerMs, otherMs, storeMs } = options;
  const limits = [
    (1000 * cores) / (workerMs + otherMs),
    (1000 * workers) / workerMs,
    storeMs === undefined || storeMs <= 0 ? Infinity : 1000 / storeMs,
  ];
  return Math.min(...limits);
}

/** `12.3 ms worker + 0.4 ms redis` style breakdown of per-task CPU. */
export function cpuBreakdown(perTaskMs: Record<string, number>): string {
  return Object.entries(perTaskMs)
    .map(([name, ms]) => `${name} ${ms.toFixed(2)}`)
    .join(' + ');
}

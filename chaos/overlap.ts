/**
 * The most attempts that ran at once per concurrency key, from the journal `p_keyed` writes
 * (chaos/policy-tools.ts). A run whose process was killed logs no end: it is taken to last its
 * planned time at most, as the permit its dead lease holds outlives the process anyway.
 */
import { existsSync, readFileSync } from 'node:fs';

export interface Overlap {
  /** Key → the most runs at once. */
  peak: Map<string, number>;
  /** Moments a key ran more attempts than `limit`. */
  overLimit: number;
}

interface Run {
  key: string;
  start: number;
  end?: number;
}

function readRuns(file: string): Run[] {
  const open = new Map<string, Run>();
  const runs: Run[] = [];
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  for (const line of text.split('\n')) {
    const [taskId, edge, key, at] = line.split(' ');
    if (taskId === undefined || key === undefined || at === undefined) continue;
    if (edge === 'start') {
      const run: Run = { key, start: Number(at) };
      open.set(taskId, run);
      runs.push(run);
    } else if (edge === 'end') {
      const run = open.get(taskId);
      if (run !== undefined) run.end = Number(at);
      open.delete(taskId);
    }
  }
  return runs;
}

export function measureOverlap(file: string, limit: number, longestMs: number): Overlap {
  const edges: { key: string; at: number; step: 1 | -1 }[] = [];
  for (const run of readRuns(file)) {
    edges.push({ key: run.key, at: run.start, step: 1 });
    edges.push({ key: run.key, at: run.end ?? run.start + longestMs, step: -1 });
  }
  // An end at the same millisecond as a start comes first: the permit passed on.
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  const running = new Map<string, number>();
  const result: Overlap = { peak: new Map(), overLimit: 0 };
  for (const { key, step } of edges) {
    const now = (running.get(key) ?? 0) + step;
    running.set(key, now);
    if (now > (result.peak.get(key) ?? 0)) result.peak.set(key, now);
    if (step === 1 && now > limit) result.overLimit += 1;
  }
  return result;
}

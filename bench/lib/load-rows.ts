/** Report rows for runs of the raw-socket load generator (_load.ts). */
import type { LoadResult } from './load.js';
import { median, spread } from './stats.js';

export const LOAD_COLUMNS = [
  'measure (32 connections)',
  'req/s (min–max)',
  'server CPU µs/req (min–max)',
  'against',
  'ratio of req/s (min–max)',
  'ratio of server CPU per request (baseline / this)',
];

export interface Comparison {
  median: number;
  spread: string;
  cpu: number;
  text: string;
}

/** Round-by-round ratios of `a` to baseline `b`: req/s a/b and CPU per request b/a. */
export function compare(a: LoadResult[], b: LoadResult[]): Comparison {
  const each = a.map((r, i) => r.perSecond / (b[i] as LoadResult).perSecond);
  const cpu = median(a.map((r, i) => (b[i] as LoadResult).serverCpuUs / r.serverCpuUs));
  const m = median(each);
  return { median: m, spread: spread(each), cpu, text: `${m.toFixed(2)}× (${spread(each)})` };
}

export function loadRow(
  label: string,
  runs: LoadResult[],
  against?: Comparison,
  baseline = '',
): string[] {
  const rps = runs.map((r) => r.perSecond);
  const cpu = runs.map((r) => r.serverCpuUs);
  return [
    label,
    `${Math.round(median(rps))} (${spread(rps, 0)})`,
    `${median(cpu).toFixed(0)} (${spread(cpu, 0)})`,
    against === undefined ? '(baseline)' : baseline,
    against === undefined ? '' : against.text,
    against === undefined ? '' : `${against.cpu.toFixed(2)}×`,
  ];
}

/** Small statistics helpers shared by the benchmarks. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

export function spread(values: number[], digits = 2): string {
  return `${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}`;
}

export interface Section {
  title: string;
  description?: string;
  columns: string[];
  rows: (string | number)[][];
  goals: { text: string; met: boolean }[];
}

export function report(section: Section): void {
  process.stdout.write(`${JSON.stringify(section)}\n`);
}

export function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (collect === undefined)
    throw new Error('run benchmarks with node --expose-gc (npm run bench does)');
  collect();
  collect();
}

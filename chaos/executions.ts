/** Handler executions as the chaos tools logged them (one `taskId tool` line per start). */
import { existsSync, readFileSync } from 'node:fs';
import { AT_MOST_ONCE } from './expect.js';

export interface Executions {
  total: number;
  /** Extra starts of `retry: false` tasks: must be 0 whatever the faults. */
  duplicateOnce: number;
  notes: string[];
}

export function countExecutions(file: string): Executions {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const perTask = new Map<string, { tool: string; count: number }>();
  let total = 0;
  for (const line of text.split('\n')) {
    const [taskId, tool] = line.split(' ');
    if (taskId === undefined || tool === undefined || taskId === '') continue;
    total += 1;
    const entry = perTask.get(taskId) ?? { tool, count: 0 };
    entry.count += 1;
    perTask.set(taskId, entry);
  }
  const result: Executions = { total, duplicateOnce: 0, notes: [] };
  for (const [taskId, { tool, count }] of perTask) {
    if (!AT_MOST_ONCE.has(tool) || count < 2) continue;
    result.duplicateOnce += count - 1;
    result.notes.push(`${tool} task ${taskId} started ${count} times (retry: false)`);
  }
  return result;
}

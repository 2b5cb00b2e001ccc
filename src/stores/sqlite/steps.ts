import type { Statements } from './statements.js';

/** A task's saved steps by name (a claim that loads the task reads them too). */
export function readSteps(sql: Statements, id: string): Record<string, unknown> {
  const steps: Record<string, unknown> = {};
  for (const row of sql.selectSteps.all(id) as { name: string; value: string }[]) {
    steps[row.name] = JSON.parse(row.value);
  }
  return steps;
}

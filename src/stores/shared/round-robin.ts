/**
 * Tasks in turn across principals, each principal's in the given order: the first of every
 * principal (in order of their first task), then the second of each, and so on (fair share).
 */
export function roundRobinByPrincipal<T extends { principal: string }>(tasks: readonly T[]): T[] {
  const rank = new Map<string, number>();
  const ranked = tasks.map((task, index) => {
    const turn = rank.get(task.principal) ?? 0;
    rank.set(task.principal, turn + 1);
    return { task, turn, index };
  });
  ranked.sort((a, b) => a.turn - b.turn || a.index - b.index);
  return ranked.map((entry) => entry.task);
}

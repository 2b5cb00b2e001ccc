/**
 * Replicas and workers sharing one store (Redis or PostgreSQL) must serve the same tools: a worker that lacks a tool
 * fails every task of it, and a replica that lacks one refuses calls others accept. Each process
 * announces what it runs (Redis: `<prefix>:fleet`, Postgres: the schema's `fleet` table) and compares itself with the live members at start.
 */
export interface FleetMember {
  role: 'serve' | 'worker';
  /** taskrail's version. */
  version: string;
  /** `name:mode` of every tool, sorted. */
  tools: string[];
  host: string;
  pid: number;
  seenAt: number;
}

/** Members older than this are taken as gone (a process that died without leaving). */
export const STALE_MS = 60_000;
export const REFRESH_MS = 20_000;

/** Human-readable differences between this process and the other live members. */
export function fleetMismatches(self: FleetMember, others: FleetMember[]): string[] {
  const problems: string[] = [];
  for (const other of others) {
    const who = `${other.role} ${other.host}:${other.pid}`;
    if (other.version !== self.version) {
      problems.push(
        `${who} runs taskrail ${other.version}, this ${self.role} runs ${self.version}`,
      );
    }
    const mine = new Set(self.tools);
    const theirs = new Set(other.tools);
    const onlyHere = self.tools.filter((tool) => !theirs.has(tool));
    const onlyThere = other.tools.filter((tool) => !mine.has(tool));
    if (onlyHere.length > 0 || onlyThere.length > 0) {
      const parts = [
        onlyHere.length > 0 ? `only here: ${onlyHere.join(', ')}` : '',
        onlyThere.length > 0 ? `only there: ${onlyThere.join(', ')}` : '',
      ].filter(Boolean);
      problems.push(
        `${who} serves other tools (${parts.join('; ')}); start both with the same --tools`,
      );
    }
  }
  return problems;
}

export interface FleetMembership {
  /** What was found at start: empty when every live member matches. */
  readonly mismatches: string[];
  /** Workers that announced themselves within the last minute (throws while the store is down). */
  liveWorkers(): Promise<number>;
  leave(): Promise<void>;
}

/** Wire timestamps: ISO 8601, UTC, milliseconds (`2026-11-29T16:05:01.123Z`). */
export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

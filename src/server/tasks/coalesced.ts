import { timerDelay } from '../../task/timers.js';
/** At most this many `notifications/resources/updated` a second per subscribed resource. */
export const NOTIFY_INTERVAL_MS = 250;

/** Calls `fire` at once, or, within the interval after the last call, once when it is over. */
export function coalesced(
  fire: () => void,
  intervalMs = NOTIFY_INTERVAL_MS,
): { poke(): void; stop(): void } {
  let last = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  const run = () => {
    timer = undefined;
    last = Date.now();
    fire();
  };
  return {
    poke() {
      if (timer !== undefined) return;
      const wait = last + intervalMs - Date.now();
      if (wait <= 0) run();
      else timer = setTimeout(run, timerDelay(wait));
    },
    stop: () => clearTimeout(timer),
  };
}

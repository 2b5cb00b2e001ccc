/** Timers armed in this process, watched for a test (not replaced: each still arms). */
import { MAX_TIMER_MS } from '../../src/task/timers.js';

/** Counts the timers armed, and those armed past node's longest delay, until `stop`. */
export function watchTimers() {
  const original = globalThis.setTimeout;
  let armed = 0;
  let overflowing = 0;
  const warnings: string[] = [];
  const counting = ((fn: () => void, ms?: number, ...rest: []) => {
    armed += 1;
    if (typeof ms === 'number' && ms > MAX_TIMER_MS) overflowing += 1;
    return original(fn, ms, ...rest);
  }) as typeof setTimeout;
  const onWarning = (warning: Error) => void warnings.push(warning.name);
  globalThis.setTimeout = Object.assign(counting, original);
  process.on('warning', onWarning);
  return {
    armed: () => armed,
    stop() {
      globalThis.setTimeout = original;
      process.off('warning', onWarning);
      return { armed, overflowing, warnings };
    },
  };
}

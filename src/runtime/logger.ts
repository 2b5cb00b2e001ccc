import type { JsonObject } from '../task/record.js';
import type { Logger } from './api.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export function isLogLevel(value: string): value is LogLevel {
  return value in ORDER;
}

/** One JSON line per record on standard error (standard output stays free for the CLI). */
export function stderrLogger(level: LogLevel = 'info'): Logger {
  const write = (at: LogLevel) => (message: string, fields?: JsonObject) => {
    if (ORDER[at] < ORDER[level]) return;
    process.stderr.write(
      `${JSON.stringify({ time: new Date().toISOString(), level: at, message, ...fields })}\n`,
    );
  };
  return { info: write('info'), warn: write('warn'), error: write('error') };
}

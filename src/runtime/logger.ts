import type { JsonObject } from '../task/record.js';
import type { Logger } from './api.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
/** `json`: one JSON object a line (for collectors). `text`: `TIME LEVEL message key=value…`. */
export type LogFormat = 'text' | 'json';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export function isLogLevel(value: string): value is LogLevel {
  return value in ORDER;
}

/** Text on a terminal, JSON when standard error goes to a file, a pipe or a collector. */
export function defaultLogFormat(stream: { isTTY?: boolean } = process.stderr): LogFormat {
  return stream.isTTY === true ? 'text' : 'json';
}

/**
 * One line per record on standard error (standard output stays free for the CLI), in one
 * format for the whole run.
 */
export function stderrLogger(
  level: LogLevel = 'info',
  format: LogFormat = 'json',
  write: (line: string) => void = (line) => void process.stderr.write(line),
): Logger {
  const at =
    (recordLevel: Exclude<LogLevel, 'silent'>) => (message: string, fields?: JsonObject) => {
      if (ORDER[recordLevel] < ORDER[level]) return;
      const time = new Date().toISOString();
      write(
        format === 'json'
          ? `${JSON.stringify({ time, level: recordLevel, message, ...fields })}\n`
          : `${time} ${recordLevel.toUpperCase().padEnd(5)} ${message}${textFields(fields)}\n`,
      );
    };
  // No `debug` at all above debug level: the server then builds no per-request log.
  const debug = ORDER.debug < ORDER[level] ? {} : { debug: at('debug') };
  const enabled = (recordLevel: Exclude<LogLevel, 'silent'>) => ORDER[recordLevel] >= ORDER[level];
  return { ...debug, info: at('info'), warn: at('warn'), error: at('error'), enabled };
}

function textFields(fields: JsonObject | undefined): string {
  if (fields === undefined) return '';
  return Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => ` ${key}=${textValue(value)}`)
    .join('');
}

function textValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

import { TaskrailError } from '../task/errors.js';

/** Where the upstream MCP server is: a Streamable HTTP URL, or a command speaking stdio. */
export type UpstreamSpec =
  | { kind: 'http'; url: URL; headers: Record<string, string> }
  | { kind: 'stdio'; command: string; args: string[] };

/** `Name: value` → `[name, value]`, with an error that says how to write it. */
export function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon < 0 ? '' : text.slice(0, colon).trim();
  const value = colon < 0 ? '' : text.slice(colon + 1).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || value === '') {
    throw new TaskrailError(
      'CONFIG',
      `--upstream-header '${text}' is not 'Name: value' (e.g. --upstream-header 'Authorization: Bearer TOKEN')`,
    );
  }
  return [name, value];
}

export function httpUpstream(url: string, headers: readonly string[]): UpstreamSpec {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TaskrailError(
      'CONFIG',
      `--upstream '${url}' is not a URL (e.g. http://host:3001/mcp)`,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TaskrailError('CONFIG', `--upstream '${url}' must be an http:// or https:// URL`);
  }
  return { kind: 'http', url: parsed, headers: Object.fromEntries(headers.map(parseHeader)) };
}

/** What `upstreamOf` prints for logs: never the headers (they may hold credentials). */
export function describeUpstream(spec: UpstreamSpec): string {
  return spec.kind === 'http' ? spec.url.href : [spec.command, ...spec.args].join(' ');
}

import type { LedgerEntry } from '../client/index.js';

/** `5s`, `3m`, `2h`, `4d`: the age column of `tasks list`. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** The `tasks show --json` object: the fields docs/host-client.md lists, then a few extras. */
/** The wire the task lives on; an entry without `protocolVersion` is on 2026-07-28. */
function wireOf(e: LedgerEntry): string {
  return e.protocolVersion ?? '2026-07-28';
}

export function showJson(e: LedgerEntry): Record<string, unknown> {
  return {
    id: e.id,
    server: e.server,
    wire: wireOf(e),
    tool: e.tool,
    arguments: e.arguments,
    status: e.status,
    statusMessage: e.statusMessage ?? null,
    ...(e.status === 'completed' && e.result !== undefined ? { result: e.result } : {}),
    ...((e.status === 'failed' || e.status === 'lost') && e.error !== undefined
      ? { error: e.error }
      : {}),
    createdAt: new Date(e.createdAt).toISOString(),
    updatedAt: new Date(e.updatedAt).toISOString(),
    ...(e.outcome === undefined ? {} : { outcome: e.outcome }),
    pollIntervalMs: e.pollIntervalMs,
    nextPollAt: new Date(e.nextPollAt).toISOString(),
    ttlMs: e.ttlMs,
    ...(e.inputRequests === undefined ? {} : { inputRequests: e.inputRequests }),
    answeredKeys: e.answeredKeys,
  };
}

export function showText(e: LedgerEntry): string {
  const lines = [
    `id:         ${e.id}`,
    `server:     ${e.server}`,
    `wire:       ${wireOf(e)}`,
    `tool:       ${e.tool}`,
    `arguments:  ${JSON.stringify(e.arguments)}`,
    `status:     ${e.status}${e.outcome === undefined || e.outcome === e.status ? '' : ` (${e.outcome})`}`,
    `message:    ${e.statusMessage ?? ''}`,
    `created:    ${new Date(e.createdAt).toISOString()}`,
    `updated:    ${new Date(e.updatedAt).toISOString()}`,
  ];
  if (e.result !== undefined) lines.push(`result:     ${JSON.stringify(e.result)}`);
  if (e.error !== undefined) lines.push(`error:      ${JSON.stringify(e.error)}`);
  if (e.inputRequests !== undefined)
    lines.push(`input:      ${Object.keys(e.inputRequests).join(', ')}`);
  return `${lines.join('\n')}\n`;
}

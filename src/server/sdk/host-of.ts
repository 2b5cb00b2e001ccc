import type { McpServer } from '@modelcontextprotocol/server';
import { sliceText } from '../../store/text.js';
import type { HostFit } from '../tasks/host-fit.js';
import { hostProfile, type HostProfile } from '../tasks/host-profiles.js';
import type { TaskResourceDeps } from './task-resources.js';

/**
 * The host behind the request being served: its `clientInfo` from `initialize` (a 2025 session)
 * or from the request's own `_meta` (the SDK fills it in per 2026-07-28 request).
 */
export function hostOf(mcp: McpServer): HostProfile {
  return hostProfile(mcp.server.getClientVersion());
}

/** How results are fitted to `profile`, reading kept-apart texts from the task store. */
export function hostFit(
  profile: HostProfile,
  serverMaxChars: number | undefined,
  resources: TaskResourceDeps | undefined,
): HostFit {
  return {
    profile,
    serverMaxChars: serverMaxChars ?? Infinity,
    readWhole: async (taskId, kind, chars) => {
      const stored = await resources?.store.readText(taskId, kind, 0, chars);
      return stored === undefined ? undefined : sliceText(stored, 0, stored.end).text;
    },
  };
}

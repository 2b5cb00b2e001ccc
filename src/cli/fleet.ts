import type { FleetMembership } from '../executors/bullmq/fleet.js';
import type { Logger } from '../runtime/api.js';
import { normalizeTaskOption } from '../runtime/tool.js';
import type { TaskServer } from '../server/app.js';
import { packageVersion } from './package-info.js';

/** On a redis store, announce this process's tools and warn about replicas or workers that differ. */
export async function announceToFleet(
  storeUrl: string,
  role: 'serve' | 'worker',
  app: TaskServer,
  logger: Logger,
): Promise<FleetMembership | undefined> {
  if (!/^rediss?:\/\//.test(storeUrl.trim())) return undefined;
  const tools = app.tools
    .all()
    .map((tool) => `${tool.name}:${normalizeTaskOption(tool.config.task).mode}`)
    .sort();
  // Loaded only for redis, so a local serve never pays for the Redis client.
  const { joinFleet } = await import('../executors/bullmq/fleet.js');
  return joinFleet(storeUrl.trim(), { role, version: packageVersion(), tools }, logger);
}

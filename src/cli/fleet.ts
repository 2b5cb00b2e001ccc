import type { FleetMembership } from '../executors/bullmq/fleet.js';
import type { Logger } from '../runtime/api.js';
import { normalizeTaskOption } from '../runtime/tool.js';
import type { TaskServer } from '../server/app.js';
import { packageVersion } from './package-info.js';
import { storeKindOf } from '../store/url.js';

/** On a redis or postgres store, announce this process's tools and warn about replicas or workers that differ. */
export async function announceToFleet(
  storeUrl: string,
  role: 'serve' | 'worker',
  app: TaskServer,
  logger: Logger,
): Promise<FleetMembership | undefined> {
  const kind = storeKindOf(storeUrl);
  if (kind !== 'postgres' && kind !== 'redis') return undefined;
  const postgres = kind === 'postgres';
  const tools = app.tools
    .all()
    .map((tool) => `${tool.name}:${normalizeTaskOption(tool.config.task).mode}`)
    .sort();
  if (postgres) {
    const { joinPostgresFleet } = await import('../executors/graphile-worker/fleet.js');
    return joinPostgresFleet(storeUrl.trim(), { role, version: packageVersion(), tools }, logger);
  }
  // Loaded only for redis, so a local serve never pays for the Redis client.
  const { joinFleet } = await import('../executors/bullmq/fleet.js');
  return joinFleet(storeUrl.trim(), { role, version: packageVersion(), tools }, logger);
}

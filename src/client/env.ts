import type { TaskrailClientOptions } from './host-client.js';

export type EnvironmentOptions = Pick<TaskrailClientOptions, 'tasks' | 'background' | 'home'>;

/**
 * The client options the documented environment variables ask for. The library reads only
 * `TASKRAIL_HOME` itself (the ledger's folder, where no `home` is given); the CLI, and hosts
 * that want the other switches, pass `clientOptionsFromEnv(process.env)` to `TaskrailClient`:
 * `TASKRAIL_DISABLE_TASKS=1` → `tasks: false`, `TASKRAIL_DISABLE_TASK_BACKGROUND=1` →
 * `background: false`, `TASKRAIL_HOME` → `home`.
 */
export function clientOptionsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): EnvironmentOptions {
  const options: EnvironmentOptions = {};
  if (env['TASKRAIL_DISABLE_TASKS'] === '1') options.tasks = false;
  if (env['TASKRAIL_DISABLE_TASK_BACKGROUND'] === '1') options.background = false;
  const home = env['TASKRAIL_HOME'];
  if (home !== undefined && home !== '') options.home = home;
  return options;
}

import { TaskrailError } from './errors.js';

/**
 * Drivers and extras (ioredis, bullmq, prom-client, …) are optional peer dependencies: an app
 * installs only what its store and features use. When a feature is used without its package,
 * Node's "Cannot find package" becomes one line that says what to install.
 */
export function missingPeerError(
  error: unknown,
  packages: readonly string[],
  feature: string,
): TaskrailError | undefined {
  if (!isModuleNotFound(error)) return undefined;
  const missing = packages.find((name) => error.message.includes(`'${name}'`));
  if (missing === undefined) return undefined;
  const names = packages.join(' and ');
  const noun = packages.length === 1 ? 'package' : 'packages';
  return new TaskrailError(
    'CONFIG',
    `${feature} needs the ${names} ${noun}: npm install ${packages.join(' ')}`,
    { cause: error },
  );
}

/** Imports a module that needs optional peers, turning a missing peer into the install hint. */
export async function importWithPeers<T>(
  load: () => Promise<T>,
  packages: readonly string[],
  feature: string,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw missingPeerError(error, packages, feature) ?? error;
  }
}

function isModuleNotFound(error: unknown): error is Error & { code: string } {
  return error instanceof Error && (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND';
}

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

/** Optional packages one chosen option needs (`a postgres:// store`: pg, graphile-worker). */
export interface PeerNeed {
  packages: readonly string[];
  feature: string;
}

/** True when `name` can be imported from here, where the features that need it import it. */
export function peerInstalled(name: string): boolean {
  try {
    import.meta.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * Checked at start, before anything opens: every optional package the chosen options need and
 * that is missing, named in one error with the one install command (instead of one package per
 * attempt, or a `/metrics` that fails only when scraped).
 */
export function missingPeersError(
  needs: ReadonlyArray<PeerNeed | undefined>,
  isInstalled: (name: string) => boolean = peerInstalled,
): TaskrailError | undefined {
  const missing = new Map<string, string[]>();
  for (const need of needs) {
    for (const name of need?.packages ?? []) {
      if (need === undefined || isInstalled(name)) continue;
      missing.set(name, [...(missing.get(name) ?? []), need.feature]);
    }
  }
  if (missing.size === 0) return undefined;
  const names = [...missing.keys()];
  const why = [...missing].map(([name, features]) => `${name} (for ${features.join(', ')})`);
  return new TaskrailError(
    'CONFIG',
    `the options given need ${names.length === 1 ? 'a package' : 'packages'} that ` +
      `${names.length === 1 ? 'is' : 'are'} not installed: ${why.join(', ')}. ` +
      `Install ${names.length === 1 ? 'it' : 'them'}: npm install ${names.join(' ')}`,
  );
}

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * The version in taskrail's own package.json, found by walking up from this file (the same
 * code runs from dist/ in the package and from .build/src/ in tests).
 */
export function packageVersion(): string {
  cached ??= findVersion();
  return cached;
}

function findVersion(): string {
  const dir = packageDir();
  if (dir === undefined) return '0.0.0';
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}

/**
 * The folder of taskrail's own package.json (the package, or a clone), found by walking up
 * from this file.
 */
export function packageDir(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const candidate = join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string };
      if (pkg.name === 'taskrail') return dir;
    }
    dir = dirname(dir);
  }
  return undefined;
}

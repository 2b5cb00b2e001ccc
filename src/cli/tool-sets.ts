import { existsSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { packageDir } from '../client/package-version.js';
import type { TaskServer } from '../server/app.js';
import { TaskrailError } from '../task/errors.js';

type Register = (app: TaskServer) => void | Promise<void>;

const BUILT_IN: Record<string, string> = {
  demo: '../server/tools/demo.js',
};

/**
 * Test fixtures that run from a clone, never from the package: `npm run pretest` compiles a
 * clone's top-level folder of the same name into .build/.
 */
const FIXTURES: Record<string, string> = {
  conformance: '.build/conformance/tools.js',
};

/** Loads `demo`, `conformance` (from a clone), or a user module whose default export registers tools. */
export async function loadToolSet(
  spec: string,
  app: TaskServer,
  cwd = process.cwd(),
): Promise<void> {
  const fixture = FIXTURES[spec];
  const builtIn = fixture === undefined ? BUILT_IN[spec] : fixtureSpecifier(spec, fixture);
  const specifier = builtIn ?? pathToFileURL(isAbsolute(spec) ? spec : resolve(cwd, spec)).href;
  let module: { default?: unknown };
  try {
    module = (await import(specifier)) as { default?: unknown };
  } catch (error) {
    const where = builtIn === undefined ? syntaxErrorPlace(specifier, error) : undefined;
    throw new TaskrailError(
      'CONFIG',
      `cannot load the tools module '${spec}'${where === undefined ? '' : ` (${where})`}: ${(error as Error).message}${typeScriptHint(spec, error)}`,
    );
  }
  if (typeof module.default !== 'function') {
    throw new TaskrailError(
      'CONFIG',
      `the tools module '${spec}' must default-export a function (app) => void`,
    );
  }
  try {
    await (module.default as Register)(app);
  } catch (error) {
    const where = placeIn(specifier, error);
    throw new TaskrailError(
      'CONFIG',
      `the tools module '${spec}' failed in its register function${where === undefined ? '' : ` (${where})`}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

/** `file:line:column` of the first stack frame in the module, if the error passed through it. */
function placeIn(moduleUrl: string, error: unknown): string | undefined {
  const stack = error instanceof Error ? (error.stack ?? '') : '';
  const frame = stack.split('\n').find((line) => line.includes(moduleUrl));
  const place = frame?.slice(frame.indexOf(moduleUrl) + moduleUrl.length).match(/^:(\d+):(\d+)/);
  return place === null || place === undefined
    ? undefined
    : `${fileURLToPath(moduleUrl)}:${place[1]}:${place[2]}`;
}

/**
 * Node 20 reports an ES module's syntax error without its place; `node --check` names it. Run
 * only on that failure, so a start costs nothing.
 */
function syntaxErrorPlace(moduleUrl: string, error: unknown): string | undefined {
  if (!(error instanceof SyntaxError)) return undefined;
  const file = fileURLToPath(moduleUrl);
  const check = spawnSync(process.execPath, ['--check', file], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  const first = (check.stderr ?? '').split('\n')[0] ?? '';
  return /:\d+$/.test(first) ? first : undefined;
}

/** Where a clone's compiled fixture is, or an error that says how to get it. */
function fixtureSpecifier(spec: string, compiled: string): string {
  const root = packageDir();
  if (root !== undefined && existsSync(join(root, compiled))) {
    return pathToFileURL(join(root, compiled)).href;
  }
  if (root !== undefined && existsSync(join(root, spec))) {
    throw new TaskrailError(
      'CONFIG',
      `the '${spec}' tool set is a test fixture compiled by \`npm run pretest\`: run that in ${root} first`,
    );
  }
  throw new TaskrailError(
    'CONFIG',
    `the '${spec}' tool set is a test fixture and not part of the npm package: run it from a clone of the taskrail repository (npm ci, npm run pretest, then node dist/cli/main.js serve --tools ${spec})`,
  );
}

/** Node runs no TypeScript by itself (Node 20): say what to do instead of only "unknown extension". */
function typeScriptHint(spec: string, error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (!/\.[cm]?ts$/.test(spec) || code !== 'ERR_UNKNOWN_FILE_EXTENSION') return '';
  return (
    ' (a TypeScript module: compile it first, e.g. `npx tsc`, and pass the .js file; or run' +
    ' taskrail under a loader: `node --import tsx node_modules/.bin/taskrail serve --tools ' +
    `${spec}\`)`
  );
}

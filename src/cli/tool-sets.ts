import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TaskServer } from '../server/app.js';
import { TaskrailError } from '../task/errors.js';

type Register = (app: TaskServer) => void | Promise<void>;

const BUILT_IN: Record<string, string> = {
  demo: '../server/tools/demo.js',
  conformance: '../server/tools/conformance.js',
};

/** Loads `demo`, `conformance`, or a user module whose default export registers tools. */
export async function loadToolSet(
  spec: string,
  app: TaskServer,
  cwd = process.cwd(),
): Promise<void> {
  const builtIn = BUILT_IN[spec];
  const specifier = builtIn ?? pathToFileURL(isAbsolute(spec) ? spec : resolve(cwd, spec)).href;
  let module: { default?: unknown };
  try {
    module = (await import(specifier)) as { default?: unknown };
  } catch (error) {
    throw new TaskrailError(
      'CONFIG',
      `cannot load the tools module '${spec}': ${(error as Error).message}${typeScriptHint(spec, error)}`,
    );
  }
  if (typeof module.default !== 'function') {
    throw new TaskrailError(
      'CONFIG',
      `the tools module '${spec}' must default-export a function (app) => void`,
    );
  }
  await (module.default as Register)(app);
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

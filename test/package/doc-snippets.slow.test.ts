import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { installPacked, ROOT, run, TSC } from './packed.js';

/**
 * Every TypeScript snippet of README.md and docs/ (each ```ts block) compiled as a user writes
 * it: in a fresh project with the packed tarball installed, under `tsc --init`'s defaults, and
 * again with the strictest options. A deliberately partial snippet is marked by the line
 * `<!-- snippet: skip REASON -->` just before it. Names a fragment takes from the text around
 * it (`app`, `client`, a helper it calls) are declared once, in AMBIENT.
 */
interface Snippet {
  /** `README.md:42`: where the block's first line of code is. */
  place: string;
  code: string;
}

const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md') && name !== 'history.md')
    .map((name) => `docs/${name}`),
];

const SKIP = /^<!-- snippet: skip \S.* -->$/;

function snippetsOf(page: string): { snippets: Snippet[]; skipped: number } {
  const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
  const snippets: Snippet[] = [];
  let skipped = 0;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```ts') continue;
    const end = lines.indexOf('```', i + 1);
    assert.ok(end > i, `${page}:${i + 1}: a ts block that never ends`);
    const before =
      lines
        .slice(0, i)
        .reverse()
        .find((line) => line.trim() !== '') ?? '';
    if (SKIP.test(before.trim())) skipped += 1;
    else snippets.push({ place: `${page}:${i + 2}`, code: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return { snippets, skipped };
}

/** What the fragments take from their surrounding text, declared for the compiler. */
const AMBIENT = `import type { TaskStore } from 'taskrail';
import type { TaskServer, ToolHandler, ToolResult } from 'taskrail/server';
import type { TaskrailClient as Client, ToolCall } from 'taskrail/client';

declare global {
  const z: typeof import('zod/v4');
  const createTaskServer: typeof import('taskrail/server').createTaskServer;
  const RpcError: typeof import('taskrail/server').RpcError;
  const TaskrailClient: typeof import('taskrail/client').TaskrailClient;
  const isShortened: typeof import('taskrail/client').isShortened;
  const taskResourceUri: typeof import('taskrail/client').taskResourceUri;
  const app: TaskServer;
  const store: TaskStore;
  const handler: ToolHandler;
  const client: Client;
  const call: ToolCall;
  const url: string;
  const id: string;
  const signal: AbortSignal;
  const BILLING: string;
  function fetchData(topic: string): Promise<string>;
  function render(data: string): string;
  function oauthToken(): Promise<string>;
  function yesterday(): string;
  function exportDay(day: string): Promise<string>;
  function exportLateRows(file: string): Promise<number>;
  function renderReport(account: string, month: string, signal: AbortSignal): Promise<ToolResult>;
}
`;

/**
 * The strictest settings on top of the defaults (those of @tsconfig/strictest). Not
 * noUnusedLocals/noUnusedParameters: a snippet shows a value or a parameter it does not use.
 */
const STRICTEST = {
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  noImplicitReturns: true,
  noFallthroughCasesInSwitch: true,
  noPropertyAccessFromIndexSignature: true,
  allowUnusedLabels: false,
  allowUnreachableCode: false,
  useUnknownInCatchVariables: true,
  checkJs: true,
};

/** tsc's errors, each with the page and line of the snippet it is in. */
async function compile(app: string, project: string, where: Map<string, Snippet>) {
  const result = await run(process.execPath, [TSC, '-p', project], { cwd: app }).catch(
    (error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }),
  );
  return result.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const match = /^snippets\/(\S+?\.ts)\((\d+),(\d+)\): (.*)$/.exec(line);
      const snippet = match === null ? undefined : where.get(match[1]!);
      if (snippet === undefined || match === null) return line;
      const [page, first] = snippet.place.split(':') as [string, string];
      return `${page}:${Number(first) + Number(match[2]) - 1}: ${match[4]}`;
    });
}

describe('every TypeScript snippet of the README and docs/ compiles against the packed package', () => {
  const work = mkdtempSync(join(tmpdir(), 'taskrail-snippets-'));
  const where = new Map<string, Snippet>();
  let app = '';
  let skipped = 0;

  before(async () => {
    app = await installPacked(work, { name: 'snippets', private: true, type: 'module' }, [
      'zod',
      '@types/node@20',
    ]);
    await run(process.execPath, [TSC, '--init'], { cwd: app });
    const dir = join(app, 'snippets');
    mkdirSync(dir);
    writeFileSync(join(dir, 'ambient.d.ts'), AMBIENT);
    for (const page of PAGES) {
      const found = snippetsOf(page);
      skipped += found.skipped;
      found.snippets.forEach((snippet, index) => {
        const name = `${page.replace(/\W+/g, '-')}-${index + 1}.ts`;
        where.set(name, snippet);
        writeFileSync(join(dir, name), `${snippet.code}\n`);
      });
    }
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('finds the snippets, and skips only the few marked partial', () => {
    assert.ok(where.size >= 10, `only ${where.size} snippets found`);
    assert.ok(skipped <= 3, `${skipped} snippets are marked skip: keep that for the partial few`);
  });

  it("compiles them with tsc --init's defaults (for Node: its own hint, types: node)", async () => {
    // tsc --init writes "types": [] and says: for Node, add "types": ["node"] and @types/node.
    const config = readFileSync(join(app, 'tsconfig.json'), 'utf8');
    assert.match(config, /"exactOptionalPropertyTypes": true/);
    assert.match(config, /"types": \[\]/);
    writeFileSync(join(app, 'tsconfig.json'), config.replace('"types": []', '"types": ["node"]'));
    const project = join(app, 'tsconfig.snippets.json');
    const options = { noEmit: true };
    writeFileSync(
      project,
      JSON.stringify({ extends: './tsconfig.json', compilerOptions: options }),
    );
    assert.deepEqual(await compile(app, project, where), []);
  });

  it('compiles them with the strictest options', async () => {
    const project = join(app, 'tsconfig.strictest.json');
    const compilerOptions = { ...STRICTEST, noEmit: true };
    writeFileSync(project, JSON.stringify({ extends: './tsconfig.json', compilerOptions }));
    assert.deepEqual(await compile(app, project, where), []);
  });
});

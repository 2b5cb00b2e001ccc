import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { installPacked, ROOT, run, TSC } from './packed.js';

/**
 * What a SQLite-only user gets from `npm install taskrail`: the packed tarball installed into an
 * empty project. No optional driver, a LICENSE, no source maps without sources, public types
 * that compile under `tsc --strict` with the compiler's default `skipLibCheck: false`, and a
 * redis store URL that says which packages to install.
 *
 * `.slow.test`: installing and type-checking take over a minute on a loaded machine, so the
 * runner gives this file 600 s instead of 120 s. Only the npm registry is contacted
 * (`--ignore-scripts` skips better-sqlite3's prebuilt download from GitHub).
 */
const OPTIONAL_PEERS = ['ioredis', 'bullmq', 'prom-client', 'pg', 'graphile-worker'];

interface Manifest {
  exports: Record<string, unknown>;
  version: string;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
}

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
const entryPoints = Object.keys(manifest.exports)
  .filter((key) => key !== './package.json')
  .map((key) => (key === '.' ? 'taskrail' : `taskrail/${key.slice(2)}`));

/** An app that imports every entry point and uses one value from each. */
function appSource(): string {
  const lines = entryPoints.map(
    (entry, i) => `import * as entry${i} from '${entry}';\nused.push(Object.keys(entry${i}));`,
  );
  return ['const used: string[][] = [];', ...lines, 'console.log(used.length);', ''].join('\n');
}

describe('the packed package in an empty project (SQLite only)', () => {
  const work = mkdtempSync(join(tmpdir(), 'taskrail-pack-'));
  const app = join(work, 'app');
  const installed = join(app, 'node_modules', 'taskrail');

  before(async () => {
    const project = { name: 'app', private: true, type: 'module' };
    assert.equal(await installPacked(work, project, ['@types/node@20']), app);
  });

  after(() => rmSync(work, { recursive: true, force: true }));

  it('declares the drivers and extras as optional peers and installs none of them', () => {
    for (const name of OPTIONAL_PEERS) {
      assert.equal(manifest.peerDependenciesMeta[name]?.optional, true, `${name} optional`);
      assert.equal(existsSync(join(app, 'node_modules', name)), false, `${name} was installed`);
    }
    // `taskrail proxy` calls upstream servers through the official SDK client: a dependency.
    assert.ok(existsSync(join(app, 'node_modules', '@modelcontextprotocol', 'client')));
    assert.ok(existsSync(join(installed, 'dist', 'index.js')));
  });

  it('ships the Apache-2.0 LICENSE and no source maps pointing at unshipped sources', () => {
    assert.match(readFileSync(join(installed, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0/);
    const maps = listFiles(join(installed, 'dist')).filter((file) => file.endsWith('.map'));
    assert.deepEqual(maps, []);
  });

  it('ships the Lua scripts of the Redis store next to the code that loads them', () => {
    const shipped = listFiles(join(installed, 'dist', 'stores', 'redis', 'lua'));
    const sources = listFiles(join(process.cwd(), 'src', 'stores', 'redis', 'lua'));
    const names = (files: string[]) => files.map((file) => file.split(/[\\/]/).pop()).sort();
    assert.ok(sources.length > 1, 'the scripts exist in src');
    assert.deepEqual(names(shipped), names(sources));
  });

  it("ships the dashboard's browser script and stylesheet where the page reads them", () => {
    const shipped = listFiles(join(installed, 'dist', 'server', 'admin', 'assets'));
    const sources = listFiles(join(process.cwd(), 'src', 'server', 'admin', 'assets'));
    const names = (files: string[]) => files.map((file) => file.split(/[\\/]/).pop()).sort();
    assert.deepEqual(names(sources), [
      'answer-form.js',
      'dashboard.css',
      'dashboard.js',
      'output-view.js',
      'run-policy.js',
    ]);
    assert.deepEqual(names(shipped), names(sources));
  });

  it('compiles an app importing every entry point with tsc --strict and no skipLibCheck', async () => {
    for (const entry of ['executors/bullmq', 'stores/postgres', 'executors/graphile-worker']) {
      assert.ok(entryPoints.includes(`taskrail/${entry}`), entry);
    }
    writeFileSync(join(app, 'app.ts'), appSource());
    const tsconfig = {
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        types: ['node'],
      },
      files: ['app.ts'],
    };
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(tsconfig));
    const result = await run(process.execPath, [TSC, '-p', app], { cwd: app }).catch(
      (error: { stdout?: string }) => ({ stdout: error.stdout ?? String(error) }),
    );
    assert.equal(result.stdout.trim(), '', 'tsc reported errors');
  });

  // Every package the store needs, named at start in one install command.
  const driverHints = [
    ['redis://127.0.0.1:1/0', 'are not installed: ', 'Install them: npm install ioredis bullmq'],
    [
      'postgres://127.0.0.1:1/x',
      'are not installed: ',
      'Install them: npm install pg graphile-worker',
    ],
  ] as const;
  for (const [storeUrl, missing, hint] of driverHints) {
    it(`fails ${storeUrl} without its drivers with one line naming what to install`, async () => {
      const bin = join(app, 'node_modules', '.bin', 'taskrail');
      const failure = await run(bin, ['serve', '--port', '0', '--store', storeUrl], {
        cwd: app,
        timeout: 30_000,
      }).then(
        () => assert.fail(`serve started on ${storeUrl} without its driver`),
        (error: { code?: number; stderr?: string }) => error,
      );
      assert.notEqual(failure.code, 0);
      assert.ok((failure.stderr ?? '').includes(missing), failure.stderr);
      assert.ok((failure.stderr ?? '').includes(hint), failure.stderr);
      assert.doesNotMatch(failure.stderr ?? '', /\n\s+at /, 'printed a stack trace');
    });
  }

  it('refuses --tools conformance with a line saying it runs from a clone', async () => {
    const bin = join(app, 'node_modules', '.bin', 'taskrail');
    const failure = await run(
      bin,
      ['serve', '--port', '0', '--store', 'memory:', '--tools', 'conformance'],
      { cwd: app, timeout: 30_000 },
    ).then(
      () => assert.fail('serve --tools conformance started from the package'),
      (error: { code?: number; stderr?: string }) => error,
    );
    assert.notEqual(failure.code, 0);
    assert.match(failure.stderr ?? '', /test fixture and not part of the npm package/);
    assert.match(failure.stderr ?? '', /clone/);
    assert.doesNotMatch(failure.stderr ?? '', /\n\s+at /, 'printed a stack trace');
  });
});

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

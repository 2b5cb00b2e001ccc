import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startNode } from '../helpers/child.js';

const HOOKS = './.build/test/fixtures/register-package-hooks.js';

/** Regression (bench/http.ts resting RSS): `serve` carried BullMQ, ora and ajv, +25 MiB. */
test('serve on SQLite loads no package of the other subcommands', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'taskrail-lazy-'));
  const child = startNode('--import', [
    HOOKS,
    'dist/cli/main.js',
    'serve',
    '--port',
    '0',
    '--store',
    `sqlite:${join(dir, 'tasks.db')}`,
    '--log-level',
    'warn',
  ]);
  try {
    await child.line(/http:\/\/\S+\/mcp/);
    const packages = child
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('package '))
      .map((line) => line.slice('package '.length));
    assert.ok(packages.includes('better-sqlite3'), 'the hooks saw the store driver');
    for (const unwanted of ['bullmq', 'ioredis', 'ora', 'ajv', 'prom-client']) {
      assert.ok(!packages.includes(unwanted), `serve loaded ${unwanted}`);
    }
  } finally {
    await child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--help still lists every subcommand', async () => {
  const child = startNode('dist/cli/main.js', ['--help']);
  await new Promise((resolve) => child.process.once('exit', resolve));
  const help = child.lines.join('\n');
  for (const name of ['serve', 'worker', 'call', 'tasks', 'admin']) {
    assert.match(help, new RegExp(`^\\s+${name} `, 'm'));
  }
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tempDir } from '../client/support.js';
import { startServing } from '../helpers/taskrail.js';

/**
 * A project where taskrail is installed with its dependencies but none of its optional peers
 * (pg, graphile-worker, ioredis, bullmq, prom-client): a copy of dist/ beside package.json, and
 * only the `dependencies` linked into node_modules (their own packages resolve from where
 * they really live, as npm's layout would give them).
 */
function stageWithoutPeers(root: string): string {
  const pkg = join(root, 'taskrail');
  cpSync('dist', join(pkg, 'dist'), { recursive: true });
  cpSync('package.json', join(pkg, 'package.json'));
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
    dependencies: Record<string, string>;
  };
  for (const name of Object.keys(manifest.dependencies)) {
    const link = join(pkg, 'node_modules', name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(realpathSync(join('node_modules', name)), link);
  }
  return join(pkg, 'dist/cli/main.js');
}

/** Issue 30 item 6: everything missing for the chosen options, named at start, in one message. */
describe('missing optional packages', () => {
  const dir = tempDir('peers');
  let cli: string;
  const tokens = join(dir.path, 'admin.json');

  before(() => {
    cli = stageWithoutPeers(dir.path);
    writeFileSync(tokens, JSON.stringify({ 'admin-secret': 'ops' }));
    const linked = readdirSync(join(dir.path, 'taskrail/node_modules'));
    for (const peer of ['pg', 'graphile-worker', 'ioredis', 'bullmq', 'prom-client']) {
      assert.ok(!linked.includes(peer), `${peer} is staged`);
    }
  });
  after(() => dir.remove());

  function run(args: string[]): { code: number | null; stdout: string; stderr: string } {
    const r = spawnSync(process.execPath, [cli, ...args], {
      cwd: dir.path,
      env: { ...process.env, TASKRAIL_STORE: '' },
      timeout: 60_000,
    });
    return { code: r.status, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  }

  it('serve on postgres with --admin names pg and graphile-worker at once (prom-client is for /metrics only)', () => {
    const r = run([
      'serve',
      '--port',
      '0',
      '--store',
      'postgres://postgres@127.0.0.1:9/none',
      '--admin',
      `tokens:${tokens}`,
    ]);
    assert.equal(r.code, 4, r.stderr);
    assert.equal(r.stdout, '', 'it must not start serving');
    assert.match(r.stderr, /npm install pg graphile-worker\n$/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  });

  it('proxy, worker and admin name what their options need', () => {
    const proxy = run([
      'proxy',
      '--port',
      '0',
      '--store',
      'redis://127.0.0.1:9/0',
      '--admin',
      `tokens:${tokens}`,
      '--upstream',
      'http://127.0.0.1:9/mcp',
    ]);
    assert.equal(proxy.code, 4, proxy.stderr);
    assert.match(proxy.stderr, /npm install ioredis bullmq\n$/);
    const worker = run(['worker', '--store', 'postgres://postgres@127.0.0.1:9/none']);
    assert.equal(worker.code, 4, worker.stderr);
    assert.match(worker.stderr, /npm install pg graphile-worker\n$/);
    const admin = run(['admin', 'list', '--store', 'redis://127.0.0.1:9/0']);
    assert.equal(admin.code, 4, admin.stderr);
    assert.match(admin.stderr, /npm install ioredis bullmq\n$/);
  });

  it('serve --admin without prom-client serves the dashboard, and /metrics says what to install', async () => {
    const { url, child } = await startServing(
      ['serve', '--port', '0', '--store', 'sqlite:./admin.db', '--admin', `tokens:${tokens}`],
      { main: cli, cwd: dir.path, env: { TASKRAIL_STORE: '' } },
    );
    try {
      const origin = new URL(url).origin;
      const ready = child.lines.find((line) => line.startsWith('taskrail serving')) ?? '';
      assert.ok(
        ready.endsWith(
          `dashboard: ${origin}/dashboard, no /metrics until prom-client is installed: npm install prom-client)`,
        ),
        ready,
      );
      const headers = { authorization: 'Bearer admin-secret' };
      const dashboard = await fetch(`${origin}/dashboard`, { headers });
      assert.equal(dashboard.status, 200);
      await dashboard.text();
      const metrics = await fetch(`${origin}/metrics`, { headers });
      assert.equal(metrics.status, 503);
      assert.match(await metrics.text(), /npm install prom-client/);
    } finally {
      await child.kill('SIGTERM');
    }
  });

  it('serve on SQLite without --admin needs none of them and starts', () => {
    const r = run(['serve', '--port', '0', '--store', 'sqlite:./x.db', '--stdio']);
    // stdin is empty: serve --stdio starts, sees the end of its input, and stops cleanly.
    assert.equal(r.code, 0, r.stderr);
  });
});

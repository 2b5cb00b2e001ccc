import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, startServe, tempDir, type Serve } from '../client/support.js';
import { deletePrefix, REDIS_URL, uniquePrefix, urlWithPrefix } from '../redis/redis-env.js';

describe('CLI: task display and error messages', () => {
  const dir = tempDir('cli-err');
  let serve: Serve;
  before(async () => {
    serve = await startServe(dir.path);
  });
  after(async () => {
    await serve.stop();
    dir.remove();
  });

  it('tasks show prints a status once, with the outcome only when it adds something', async () => {
    const home = join(dir.path, 'h-show');
    const id = (
      await runCli(['call', serve.url, 'slow_compute', '--args', '{"seconds":0}', '--detach'], home)
    ).stdout.trim();
    assert.equal((await runCli(['tasks', 'wait', id], home)).code, 0);
    const text = (await runCli(['tasks', 'show', id.slice(0, 8)], home)).stdout;
    assert.match(text, /^status: +completed$/m);
    assert.match(text, /^wire: +2026-07-28$/m);
    const failing = (
      await runCli(['call', serve.url, 'failing_job', '--detach'], home)
    ).stdout.trim();
    assert.equal((await runCli(['tasks', 'wait', failing], home)).code, 1);
    const failed = (await runCli(['tasks', 'show', failing], home)).stdout;
    assert.match(failed, /^status: +completed \(tool_error\)$/m);
  });

  it('serve --tools with a .ts module says to compile it or use a loader', async () => {
    const module = join(dir.path, 'tools.ts');
    writeFileSync(module, 'export default (app: unknown): void => {};\n');
    const result = await runCli(
      ['serve', '--port', '0', '--store', 'memory:', '--tools', module],
      dir.path,
    );
    assert.equal(result.code, 4);
    assert.match(result.stderr, /compile it first.*or run taskrail under a loader/);
  });

  const serveWith = (module: string, source: string) => {
    writeFileSync(module, source);
    return runCli(['serve', '--port', '0', '--store', 'memory:', '--tools', module], dir.path);
  };

  it('names the tools module (file:line) whose register() throws', async () => {
    const module = join(dir.path, 'throws.mjs');
    const result = await serveWith(
      module,
      'export default function register() {\n  throw new Error("boom in register");\n}\n',
    );
    assert.equal(result.code, 4);
    assert.ok(
      result.stderr.includes(
        `the tools module '${module}' failed in its register function (${module}:2:9): boom in register`,
      ),
      result.stderr,
    );
  });

  it('gives file:line for a syntax error in a tools module', async () => {
    const module = join(dir.path, 'broken.mjs');
    const result = await serveWith(
      module,
      'export default function register() {\n  const x = ;\n}\n',
    );
    assert.equal(result.code, 4);
    assert.ok(result.stderr.includes(`(${module}:2): Unexpected token ';'`), result.stderr);
  });

  it('calls a SQLite path below a regular file a mistake to fix, not one to retry', async () => {
    const file = join(dir.path, 'plain-file');
    writeFileSync(file, 'not a folder');
    const store = `sqlite:${join(file, 'tasks.db')}`;
    const result = await runCli(['serve', '--port', '0', '--store', store], dir.path);
    assert.equal(result.code, 4);
    assert.match(result.stderr, /plain-file is a file, not a folder: point --store at a path/);
    assert.doesNotMatch(result.stderr, /retry/);
  });
});

describe('CLI: serve on a busy port with a redis store', () => {
  if (REDIS_URL === undefined || REDIS_URL === '') {
    it('needs TASKRAIL_REDIS_URL', { skip: 'TASKRAIL_REDIS_URL is not set' }, () => undefined);
    return;
  }
  const prefix = uniquePrefix();
  let busy: Server;
  before(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    await new Promise((resolve) => busy.close(resolve));
    await deletePrefix(prefix);
  });

  it('reports EADDRINUSE, not a closed store', async () => {
    const port = (busy.address() as { port: number }).port;
    const result = await runCli(
      ['serve', '--port', String(port), '--store', urlWithPrefix(prefix)],
      process.cwd(),
    );
    assert.equal(result.code, 4, result.stderr);
    assert.match(result.stderr, /EADDRINUSE/);
    assert.doesNotMatch(result.stderr, /is closed|\n\s+at /);
  });
});

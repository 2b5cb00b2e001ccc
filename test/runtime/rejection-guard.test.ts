import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const guardModule = join(
  dirname(fileURLToPath(import.meta.url)),
  '../../src/runtime/rejection-guard.js',
);

describe('the process-level rejection guard (serve, worker)', () => {
  it('logs a stray rejection and keeps the process running', () => {
    const script = `
      const { installRejectionGuard } = await import(${JSON.stringify(guardModule)});
      installRejectionGuard({
        info() {}, warn() {},
        error: (message, fields) => console.log('logged:', message, fields.error),
      });
      Promise.reject(new Error('stray write failed'));
      setTimeout(() => console.log('still serving'), 50);
    `;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stdout, /logged: unhandled promise rejection .* stray write failed/);
    assert.match(child.stdout, /still serving/);
  });

  it('without it, the same rejection would have ended the process (the default)', () => {
    const child = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "Promise.reject(new Error('x')); setTimeout(() => {}, 50);"],
      { encoding: 'utf8', timeout: 10_000 },
    );
    assert.notEqual(child.status, 0);
  });
});

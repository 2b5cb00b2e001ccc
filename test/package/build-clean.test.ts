import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

/** What may follow the clean: compiling, and copying the Redis store's .lua files next to it. */
const COMPILE_STEPS = ['tsc ', 'node scripts/copy-assets.mjs '];

describe('npm run pretest', () => {
  it('removes .build before compiling, so a deleted test cannot keep running', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
      scripts: Record<string, string>;
    };
    const steps = pkg.scripts['pretest']?.split('&&').map((step) => step.trim()) ?? [];
    const clean = steps[0] ?? '';
    assert.ok(
      steps.slice(1).every((step) => COMPILE_STEPS.some((prefix) => step.startsWith(prefix))),
      `only compiles (and copies the .lua assets) after cleaning: ${steps.join(' && ')}`,
    );
    // Runs the real first step in a scratch folder holding a stale compiled test.
    const dir = mkdtempSync(join(tmpdir(), 'taskrail-clean-'));
    try {
      mkdirSync(join(dir, '.build/test'), { recursive: true });
      writeFileSync(join(dir, '.build/test/deleted.test.js'), '');
      execSync(clean, { cwd: dir, stdio: 'pipe' });
      assert.equal(existsSync(join(dir, '.build')), false, `'${clean}' left .build`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

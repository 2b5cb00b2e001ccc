import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { Ledger } from '../../src/client/index.js';
import { waitFor } from '../helpers/wait.js';
import { CLI, runCli, startServe, tempDir, type Serve } from './support.js';

const hasTmux = (() => {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const tmux = (...args: string[]): string => execFileSync('tmux', args, { encoding: 'utf8' });
const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs a CLI command in a detached tmux session (a real pseudo-terminal). */
function inTerminal(
  name: string,
  home: string,
  args: string[],
): { screen(): string; keys(text: string): void; end(): void } {
  const command = `TASKRAIL_HOME=${quote(home)} ${quote(process.execPath)} ${quote(CLI)} ${args.map(quote).join(' ')}; echo EXIT=$?; sleep 60`;
  tmux('new-session', '-d', '-s', name, '-x', '200', '-y', '50', command);
  return {
    screen: () => tmux('capture-pane', '-p', '-t', name),
    keys: (text) => void tmux('send-keys', '-t', name, text, 'Enter'),
    end: () => void execFileSync('tmux', ['kill-session', '-t', name], { stdio: 'ignore' }),
  };
}

describe(
  'asking the person at the terminal',
  { skip: hasTmux ? false : 'tmux is not installed' },
  () => {
    const dir = tempDir('tty');
    let serve: Serve;
    const session = `taskrail-test-${process.pid}`;

    before(async () => {
      serve = await startServe(dir.path);
    });
    after(async () => {
      await serve.stop();
      dir.remove();
    });

    it('call prompts field by field from the requestedSchema in a pseudo-terminal', async () => {
      const term = inTerminal(`${session}-a`, `${dir.path}/a`, [
        'call',
        serve.url,
        'confirm_delete',
        '--args',
        '{"filename":"a.txt"}',
      ]);
      try {
        await waitFor(
          'the confirm prompt',
          () => /Really delete\?.*yes or no/.test(term.screen()),
          { timeoutMs: 20_000 },
        );
        term.keys('maybe');
        await waitFor('a retry on a bad answer', () =>
          /please enter yes or no/.test(term.screen()),
        );
        term.keys('yes');
        const screen = await waitFor(
          'the end',
          () => /EXIT=\d+/.test(term.screen()) && term.screen(),
          { timeoutMs: 20_000 },
        );
        assert.match(screen, /Deleted a\.txt\./);
        assert.match(screen, /EXIT=0/);
      } finally {
        term.end();
      }
    });

    it('without a terminal it fails clearly; tasks answer then answers it at a terminal', async () => {
      const home = `${dir.path}/b`;
      const r = await runCli(
        ['call', serve.url, 'confirm_delete', '--args', '{"filename":"b.txt"}'],
        home,
      );
      assert.equal(r.code, 4);
      assert.match(r.stderr, /standard input is not a terminal/);
      const ledger = Ledger.open(home);
      const id = ledger.list()[0]!.id;
      ledger.close();
      const term = inTerminal(`${session}-b`, home, ['tasks', 'answer', id]);
      try {
        await waitFor('the confirm prompt', () => /Really delete\?/.test(term.screen()), {
          timeoutMs: 20_000,
        });
        term.keys('y');
        const screen = await waitFor(
          'the end',
          () => /EXIT=\d+/.test(term.screen()) && term.screen(),
          { timeoutMs: 20_000 },
        );
        assert.match(screen, new RegExp(`${id} \\w+ answered confirm`));
        assert.match(screen, /EXIT=0/);
      } finally {
        term.end();
      }
      const waited = await runCli(['tasks', 'wait', id], home);
      assert.equal(waited.code, 0, waited.stderr);
      assert.match(waited.stdout, /Deleted b\.txt\./);
    });
  },
);

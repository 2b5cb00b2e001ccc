import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { ScriptedModel, type Exchange, type Script } from '../vendors/scripted-model.js';
import type { Host, RunOptions } from './hosts.js';
import type { HostRun } from './run.js';

export interface Outcome {
  run: HostRun;
  model: ScriptedModel;
  /** The calls the model made (Codex's tool_search left out) and what it saw of each. */
  calls: Exchange[];
}

/** Runs the host once against `serverUrl` with a scripted model; the host must exit 0. */
export async function scenario(
  host: Host,
  serverUrl: string,
  script: Script,
  timeoutMs: number,
  options: RunOptions = {},
): Promise<Outcome> {
  const model = new ScriptedModel(host.vendor, script);
  const modelUrl = await model.start();
  try {
    const run = await host.run(modelUrl, serverUrl, timeoutMs, options);
    const calls = model.history.filter((exchange) => exchange.tool !== 'tool_search');
    const outcome = { run, model, calls };
    assert.equal(run.code, 0, explain(host, outcome, `exited ${String(run.code)}`));
    return outcome;
  } finally {
    await model.stop();
  }
}

/** An assertion message in the host's own words: what it printed and what its model saw. */
export function explain(host: Host, outcome: Outcome, what: string): string {
  return [
    `${host.profile.name} ${host.version}: ${what}`,
    'what the model saw:',
    outcome.model.transcript(600),
    `stderr (tail): ${outcome.run.stderr.slice(-2000)}`,
    `stdout (tail): ${outcome.run.stdout.slice(-2000)}`,
  ].join('\n');
}

/** One line per host × row for the CI log: `# host codex | big result | … | 12.3 s`. */
export function figure(t: TestContext, host: Host, row: string, detail: string, ms: number): void {
  const line = `host ${host.profile.name} ${host.version} | ${row} | ${detail} | ${(ms / 1000).toFixed(1)} s`;
  t.diagnostic(line);
}

/**
 * A short transcript for docs/hosts.md (what the model called and saw), written to
 * `$TASKRAIL_HOST_TRANSCRIPTS/HOST--ROW.txt` when that folder is set.
 */
export function transcript(host: Host, row: string, outcome: Outcome): void {
  const dir = process.env['TASKRAIL_HOST_TRANSCRIPTS'];
  if (dir === undefined || dir === '') return;
  mkdirSync(dir, { recursive: true });
  const file = `${host.profile.name}--${row.replace(/[^a-z0-9]+/gi, '-')}.txt`;
  writeFileSync(join(dir, file), `${outcome.model.transcript(200, 4)}\n`);
}

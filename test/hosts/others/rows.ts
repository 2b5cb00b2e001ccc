import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { followTheResult, handleIn, type Reading } from './model-policy.js';
import type { Host } from './hosts.js';
import { explain, figure, scenario, transcript } from './scenario.js';

/** The rows of the Hosts contract (shared/design/interface.md), one function each. */

export const BIG_CHARS = 200_000;
/** The longest a host run may take: the 75 s tool plus the host's own start-up. */
export const LONG_RUN_MS = 110_000;
const RUN_MS = 60_000;

/** The demo `big_dump`'s text (200,000 characters by default), to compare what the model read. */
export function bigDumpText(chars = BIG_CHARS): string {
  const rows: string[] = [];
  let length = 0;
  for (let i = 1; length < chars; i++) {
    const row = `row ${i}: value=${(i * 7919) % 10_007}\n`;
    rows.push(row);
    length += row.length;
  }
  return rows.join('').slice(0, chars);
}

export async function quickTool(t: TestContext, host: Host, serverUrl: string): Promise<void> {
  const first = { tool: 'greet', args: { name: 'Ada' } };
  const outcome = await scenario(host, serverUrl, followTheResult(host.profile, first), RUN_MS);
  const seen = outcome.calls[0]?.seen ?? '';
  assert.match(seen, /Hello, Ada!/, explain(host, outcome, 'the quick result'));
  // The shape of what the host sends: the tool under the name the model is told to call
  // (Codex: inside the namespace its tool_search returns).
  const searched = outcome.model.history.filter((exchange) => exchange.tool === 'tool_search');
  const offered = [...outcome.model.offered, ...searched.map((exchange) => exchange.seen)];
  const name = host.profile.tool('greet');
  const [space, fn] = name.includes('.') ? name.split('.') : [undefined, name];
  const listed = offered.some(
    (entry) =>
      entry === name ||
      (space !== undefined &&
        entry.includes(`"name":"${space}"`) &&
        entry.includes(`"name":"${fn}"`)),
  );
  assert.ok(listed, explain(host, outcome, `the host offers the tool as ${name}`));
  figure(t, host, 'quick tool', `result in ${outcome.calls.length} call`, outcome.run.ms);
  transcript(host, 'quick tool', outcome);
}

/**
 * A 75 s tool: the result, inline when the host's own time-out leaves room for the wait, or a
 * handle within it and then the result through task_result; never the host's time-out.
 */
export async function longTool(t: TestContext, host: Host, serverUrl: string): Promise<void> {
  const first = { tool: 'slow_compute', args: { seconds: 75 } };
  const outcome = await scenario(
    host,
    serverUrl,
    followTheResult(host.profile, first),
    LONG_RUN_MS,
  );
  const why = (what: string) => explain(host, outcome, what);
  const [call, ...follow] = outcome.calls;
  assert.ok(call !== undefined, why('the model called the tool'));
  if (follow.length > 0) {
    assert.equal(handleIn(call.seen)?.next, 'task_result', why('a handle, then task_result'));
  }
  assert.ok(
    follow.every((exchange) => exchange.tool === host.profile.tool('task_result')),
    why('only task_result after the handle'),
  );
  const done = /Finished the computation after 75 second\(s\)\./;
  assert.match(outcome.calls.at(-1)?.seen ?? '', done, why('the result'));
  for (const exchange of outcome.calls) {
    assert.doesNotMatch(exchange.seen, /timed? ?out|timeout/i, why('no host time-out'));
  }
  const how =
    follow.length === 0 ? 'result inline' : `handle, then result via ${follow.length} task_result`;
  figure(t, host, '75 s tool', how, outcome.run.ms);
  transcript(host, '75 s tool', outcome);
}

/** A 200,000-character result: the notice and first part, then all of it, exactly. */
export async function bigResult(t: TestContext, host: Host, serverUrl: string): Promise<void> {
  let reading: Reading | undefined;
  const first = { tool: 'big_dump', args: {} };
  const script = followTheResult(host.profile, first, (seen) => (reading = seen));
  const outcome = await scenario(host, serverUrl, script, RUN_MS);
  const why = (what: string) => explain(host, outcome, what);
  assert.ok(reading !== undefined, why('the model saw the shortened-result notice'));
  assert.equal(reading.notice.total, BIG_CHARS, why('the notice gives the whole length'));
  const expected = bigDumpText();
  const at = firstDifference(reading.text, expected);
  assert.ok(
    at < 0,
    why(
      `the model reached all ${BIG_CHARS} characters exactly; it has ${reading.text.length}, ` +
        `first difference at ${at}: ${JSON.stringify(reading.text.slice(at, at + 80))}`,
    ),
  );
  if (host.profile.offersRead !== undefined) {
    // Offered only once the host re-listed resources (notifications/resources/list_changed).
    const offered = host.profile.offersRead(outcome.model.offered);
    assert.ok(offered, why('the host offered its resource tool once the result existed'));
  }
  const pages = readsBy(outcome.calls.slice(-reading.reads));
  const reads = `${reading.text.length} chars: ${reading.firstPart} in the result, the rest in ${pages}`;
  figure(t, host, 'big result', reads, outcome.run.ms);
  transcript(host, 'big result', outcome);
}

function firstDifference(got: string, want: string): number {
  if (got === want) return -1;
  let i = 0;
  while (i < got.length && i < want.length && got[i] === want[i]) i++;
  return i;
}

/**
 * A tool's question: answered through the host's elicitation where it has one (`elicitation`),
 * else by the model through `task_answer` (`task_answer`).
 */
export async function toolQuestion(
  t: TestContext,
  host: Host,
  serverUrl: string,
  way: 'elicitation' | 'task_answer',
): Promise<void> {
  await listedEvenIfNotMet(t, host, 'question', () => questionRow(t, host, serverUrl, way));
}

/** The row's line in the CI listing also when the host cannot do it (then the reason), rethrown. */
async function listedEvenIfNotMet(
  t: TestContext,
  host: Host,
  row: string,
  run: () => Promise<void>,
): Promise<void> {
  const started = Date.now();
  try {
    await run();
  } catch (error) {
    const seen = /model sees {2}(.*)/.exec(String(error))?.[1] ?? String(error);
    // A tool error wrapped in the host's JSON: its own text says more than the wrapping.
    const inner = /"text":"([^"]+)"/.exec(seen.replace(/\\+"/g, '"'))?.[1];
    figure(t, host, row, `NOT MET: ${(inner ?? seen).slice(0, 200)}`, Date.now() - started);
    throw error;
  }
}

async function questionRow(
  t: TestContext,
  host: Host,
  serverUrl: string,
  way: 'elicitation' | 'task_answer',
): Promise<void> {
  const first = { tool: 'confirm_step', args: {} };
  const outcome = await scenario(host, serverUrl, followTheResult(host.profile, first), RUN_MS);
  const why = (what: string) => explain(host, outcome, what);
  const last = outcome.calls.at(-1);
  const answer = /answer (accept|decline|cancel) proceed=(true|false)/.exec(last?.seen ?? '');
  assert.ok(
    answer !== null,
    why('the tool got an answer to its question and the model its result'),
  );
  if (way === 'task_answer') {
    assert.ok(
      outcome.calls.some((exchange) => exchange.tool === host.profile.tool('task_answer')),
      why('the model answered through task_answer'),
    );
  } else {
    assert.equal(outcome.calls.length, 1, why('the host answered within the one call'));
  }
  figure(
    t,
    host,
    'question',
    `answered by ${way === 'elicitation' ? 'the host' : 'the model'}: ${answer[1]}`,
    outcome.run.ms,
  );
  transcript(host, 'question', outcome);
}

/**
 * Copilot `--experimental` (declares tasks): a `required` tool runs as a task to its result,
 * an `optional` one still answers (inline or by handle), never a CreateTaskResult it fails on.
 */
export async function experimentalTool(
  t: TestContext,
  host: Host,
  serverUrl: string,
  tool: { name: string; seconds: number; result: RegExp; required?: boolean },
): Promise<void> {
  const row = `--experimental ${tool.name} ${tool.seconds} s`;
  await listedEvenIfNotMet(t, host, row, () => experimentalRow(t, host, serverUrl, tool));
}

async function experimentalRow(
  t: TestContext,
  host: Host,
  serverUrl: string,
  tool: { name: string; seconds: number; result: RegExp; required?: boolean },
): Promise<void> {
  const first = { tool: tool.name, args: { seconds: tool.seconds } };
  const script = followTheResult(host.profile, first);
  const timeoutMs = tool.seconds > 30 ? LONG_RUN_MS : RUN_MS;
  const outcome = await scenario(host, serverUrl, script, timeoutMs, { experimental: true });
  const why = (what: string) => explain(host, outcome, what);
  for (const exchange of outcome.calls) {
    assert.doesNotMatch(
      exchange.seen,
      /expected CallToolResult|CreateTaskResult/,
      why('no CreateTaskResult'),
    );
  }
  assert.match(outcome.calls.at(-1)?.seen ?? '', tool.result, why(`the result of ${tool.name}`));
  if (tool.required) {
    // Copilot's own words for a call it follows as a task: a background agent the model reads.
    const started = /MCP task started in background with agent_id/;
    assert.match(outcome.calls[0]?.seen ?? '', started, why('followed as a task'));
  }
  const how =
    outcome.calls.length === 1
      ? 'result in the call'
      : `result via ${readsBy(outcome.calls.slice(1))}`;
  figure(t, host, `--experimental ${tool.name} ${tool.seconds} s`, how, outcome.run.ms);
  transcript(host, `experimental ${tool.name}`, outcome);
}

/** `2 read_mcp_resource` or `1 task_result + 1 read_mcp_resource`: the reads by tool. */
function readsBy(reads: { tool: string }[]): string {
  const counts = new Map<string, number>();
  for (const read of reads) counts.set(read.tool, (counts.get(read.tool) ?? 0) + 1);
  return [...counts].map(([tool, count]) => `${count} ${tool}`).join(' + ') || '0 reads';
}

/**
 * A chaos client process: `node client.js URL run PLAN_JSON` runs its planned tasks through
 * the client library (ledger under $TASKRAIL_HOME); `node client.js URL resume` reattaches to
 * the unfinished tasks of its ledger after it was killed, and sends what it never sent. Prints one JSON line per event:
 * `{"created": taskId, "n": n}` and `{"end": taskId, "n": n, "tool": ..., "status": ...}`.
 */
import { clientOptionsFromEnv } from '../src/client/env.js';
import { TaskrailClient, type CallOutcome, type ToolCall } from '../src/client/index.js';
import { answerFor, TOOL, type Spec } from './expect.js';

const [url, mode, planJson] = process.argv.slice(2) as [string, string, string | undefined];
const DEADLINE = Date.now() + Number(process.env['CHAOS_CLIENT_MS'] ?? 90_000);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const emit = (value: object) => process.stdout.write(`${JSON.stringify(value)}\n`);

// The library reads no environment: each chaos client's own ledger folder comes from
// $TASKRAIL_HOME through the CLI's helper, or every client would share ~/.taskrail.
const client = new TaskrailClient({
  ...clientOptionsFromEnv(process.env),
  url,
  defaultPollIntervalMs: 100,
  validateArguments: false,
  connectionGraceMs: 2_000,
  input: {
    elicitation: async (params) => ({
      action: 'accept',
      content: { v: answerFor(String(params['message'])) },
    }),
  },
});

function ended(taskId: string, outcome: CallOutcome): void {
  const entry = client.ledger.get(taskId);
  const n = Number((entry?.arguments as { n?: number } | undefined)?.n);
  const base = { end: taskId, n, tool: entry?.tool };
  if (outcome.kind === 'completed' || outcome.kind === 'tool_error') {
    const first = outcome.result.content[0] as { text?: string } | undefined;
    emit({ ...base, status: 'completed', text: first?.text });
  } else if (outcome.kind === 'failed') {
    emit({ ...base, status: 'failed', error: outcome.error.message });
  } else emit({ ...base, status: outcome.kind });
}

/** Waits for the end, reattaching while the server or the proxy is down. */
async function follow(taskId: string, first: ToolCall): Promise<void> {
  let call = first;
  while (Date.now() < DEADLINE) {
    try {
      // Bounded by the deadline: a task that never ends is reported, not waited on for ever.
      const late = pause(DEADLINE - Date.now()).then(() => undefined);
      const outcome = await Promise.race([call.result(), late]);
      if (outcome === undefined) break;
      return ended(taskId, outcome);
    } catch {
      await pause(300);
      call = await client.attach(taskId).catch(() => call);
    }
  }
  emit({ timeout: taskId });
}

/** The server could not make the task for now (its store is down): JSON-RPC internal error. */
const INTERNAL_ERROR = -32603;

async function create(spec: Spec): Promise<ToolCall | undefined> {
  let last: ToolCall | undefined;
  while (Date.now() < DEADLINE) {
    try {
      // One key per planned call: a retry (after a cut reply, or in a resumed process) must
      // land on the task the first attempt made.
      last = await client.callTool(
        TOOL[spec.kind],
        { n: spec.n, ms: spec.ms, ...spec.args },
        { idempotencyKey: `chaos-${spec.n}` },
      );
      const outcome = last.outcome;
      // A required-task tool answered without a task: the server refused the call for now.
      const refused = last.taskId === undefined && outcome?.kind === 'failed';
      if (!refused || outcome.error.code !== INTERNAL_ERROR) return last;
    } catch {
      // no answer at all: the same key again
    }
    await pause(300);
  }
  return last;
}

async function runOne(spec: Spec): Promise<void> {
  const call = await create(spec);
  if (call?.taskId === undefined) return void emit({ uncreated: spec.n, outcome: call?.outcome });
  emit({ created: call.taskId, n: spec.n });
  if (spec.expires === true) return; // left to expire asleep, unwatched
  await cancelThenFollow(call, spec.cancelAfterMs);
}

/** Cancels the task `cancelAfterMs` in (when planned), else follows it to its end. */
async function cancelThenFollow(call: ToolCall, cancelAfterMs: number | undefined) {
  if (cancelAfterMs !== undefined) {
    await pause(cancelAfterMs);
    // Until it lands: a task left uncancelled may sleep for an hour.
    while (Date.now() < DEADLINE) {
      const done = await call.cancel().then(
        (outcome) => (ended(call.taskId as string, outcome), true),
        () => false,
      );
      if (done) return;
      await pause(300);
    }
  }
  await follow(call.taskId as string, call);
}

async function run(specs: Spec[], concurrency: number): Promise<void> {
  const queue = [...specs];
  const lane = async () => {
    for (let spec = queue.shift(); spec !== undefined; spec = queue.shift()) await runOne(spec);
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

/** After a kill: the ledger's unfinished tasks, then the planned calls it never sent. */
async function resume(specs: Spec[]): Promise<void> {
  let calls: ToolCall[] = [];
  while (Date.now() < DEADLINE) {
    try {
      calls = await client.resume();
      break;
    } catch {
      await pause(300);
    }
  }
  const sent = new Set(client.ledger.list().map((entry) => Number(entry.arguments['n'])));
  const specOf = (call: ToolCall) => {
    const n = Number(client.ledger.get(call.taskId as string)?.arguments['n']);
    return specs.find((spec) => spec.n === n);
  };
  await Promise.all([
    ...calls
      .filter((call) => specOf(call)?.expires !== true)
      .map((call) =>
        cancelThenFollow(call, specOf(call)?.cancelAfterMs === undefined ? undefined : 0),
      ),
    run(
      specs.filter((spec) => !sent.has(spec.n)),
      8,
    ),
  ]);
}

const specs = JSON.parse(planJson ?? '[]') as Spec[];
if (mode === 'run') await run(specs, 8);
else await resume(specs);
client.close();
process.exit(0);

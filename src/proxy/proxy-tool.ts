import { randomUUID } from 'node:crypto';
import { fairScopeOfTask } from '../server/tasks/caller-scope.js';
import { fairKeyOf } from '../server/tasks/fair-bound.js';
import { ANONYMOUS } from '../server/tasks/principal.js';
import { isParkSignal } from '../runtime/park.js';
import type { TaskContext, ToolHandler, ToolResult } from '../runtime/tool.js';
import { RpcError, RPC } from '../task/errors.js';
import type { JsonObject } from '../task/record.js';
import {
  LiveCall,
  type CallPlan,
  type CallSettings,
  type UpstreamQuestion,
  type UpstreamTaskRef,
} from './live-call.js';
import { failedCallError, type UpstreamCallPolicy } from './call-policy.js';
import { stopReasonOf } from '../runtime/abort-reasons.js';
import {
  handBackToHolder,
  HOLDER_STEP,
  watchWhileParked,
  type Holder,
  type ParkedCallDeps,
} from './parked-call.js';

/** `calls`: upstream calls in progress in this process, by the key recorded in their task. */
export interface ProxyToolDeps extends CallSettings, ParkedCallDeps {}

export interface ProxyToolSettings {
  name: string;
  /** Call the upstream as an upstream task (it supports them for this tool). */
  asTask: boolean;
  /** Listed in --retry-tools (or --retry given): after a crash, call the upstream again. */
  retry: boolean;
  /** --timeout and --retry: how a failed call ends its attempt. */
  policy: UpstreamCallPolicy;
}

const NOT_RECORDED = Symbol('not recorded');

/**
 * The steps of one attempt's upstream call: its key and the upstream task it became. A new
 * attempt (after an error, a time-out or a crash) has its own, so a retry makes a new call
 * instead of finding the last one; the first attempt keeps the names earlier versions wrote.
 */
function stepsOf(attempt: number): { call: string; task: string } {
  const suffix = attempt === 1 ? '' : `@${attempt}`;
  return { call: `proxy:call${suffix}`, task: `proxy:upstream-task${suffix}` };
}

/**
 * A taskrail handler whose work is one upstream call. taskrail re-runs a handler from the
 * start after a park (and after a crash), so the call is not made here on every run: the
 * first run records a key as a step and starts a LiveCall under it; later runs in this process
 * attach to that LiveCall; a run that finds the key but no LiveCall either belongs in the process
 * that holds the call (handed back, parked-call.ts) or is a run after that process died, which
 * follows the recorded upstream task, calls again (--retry-tools), or fails "interrupted".
 */
export function proxyHandler(tool: ProxyToolSettings, deps: ProxyToolDeps): ToolHandler {
  return async (args, ctx) => {
    if (ctx.taskId === undefined) return callWithoutTask(tool, args, ctx, deps);
    const { key, live } = await attach(tool, args, ctx, deps);
    return runAttached(key, live, tool, ctx, deps);
  };
}

async function attach(
  tool: ProxyToolSettings,
  args: JsonObject,
  ctx: TaskContext,
  deps: ProxyToolDeps,
): Promise<{ key: string; live: LiveCall }> {
  const steps = stepsOf(ctx.attempt);
  let fresh = false;
  const key = await ctx.step(steps.call, () => {
    fresh = true;
    return randomUUID();
  });
  const existing = deps.calls.get(key);
  if (existing !== undefined) return { key, live: existing };
  const plan = fresh
    ? await firstRunPlan(tool, args, ctx)
    : await rerunPlan(tool, args, ctx, deps, steps.task);
  const live = new LiveCall(plan, deps, await upstreamHolder(ctx, deps));
  deps.calls.set(key, live);
  return { key, live };
}

/**
 * A run that finds its attempt's call key but not the call: another process holds it (handed
 * back), or the process that made it is gone. An upstream task is followed again; a tool that
 * may be called again is; anything else fails "interrupted".
 */
async function rerunPlan(
  tool: ProxyToolSettings,
  args: JsonObject,
  ctx: TaskContext,
  deps: ProxyToolDeps,
  taskStep: string,
): Promise<CallPlan> {
  handBackToHolder((await peekStep(ctx, HOLDER_STEP)) as Holder | undefined, deps.owner);
  const upstreamTask = (await peekStep(ctx, taskStep)) as UpstreamTaskRef | undefined;
  if (upstreamTask !== undefined) return { kind: 'follow', task: upstreamTask };
  if (tool.retry) return { kind: 'call', tool: tool.name, args, asTask: tool.asTask };
  throw interrupted(tool);
}

/**
 * The first run of an attempt. Attempt 1 calls the upstream. A later one comes after the last
 * attempt failed (an error or a time-out, under --retry) or was interrupted (a crash): its
 * upstream task, if it made one, is followed while it lives (under --retry a failed or
 * cancelled one is called anew); without one the rules of a re-run apply.
 */
async function firstRunPlan(
  tool: ProxyToolSettings,
  args: JsonObject,
  ctx: TaskContext,
): Promise<CallPlan> {
  const call: CallPlan = { kind: 'call', tool: tool.name, args, asTask: tool.asTask };
  if (ctx.attempt === 1) return call;
  const last = stepsOf(ctx.attempt - 1);
  if ((await peekStep(ctx, last.call)) === undefined) return call;
  const upstreamTask = (await peekStep(ctx, last.task)) as UpstreamTaskRef | undefined;
  const retrying = (tool.policy.retries ?? 0) > 0;
  if (upstreamTask !== undefined) {
    return retrying
      ? { kind: 'follow', task: upstreamTask, orCall: call }
      : { kind: 'follow', task: upstreamTask };
  }
  if (tool.retry) return call;
  throw interrupted(tool);
}

function interrupted(tool: ProxyToolSettings): RpcError {
  return new RpcError(
    RPC.INTERNAL_ERROR,
    `Task interrupted: the proxy stopped while calling '${tool.name}' upstream, and the call is not safe to repeat (list the tool in --retry-tools to re-run it).`,
  );
}

async function runAttached(
  key: string,
  live: LiveCall,
  tool: ProxyToolSettings,
  ctx: TaskContext,
  deps: ProxyToolDeps,
): Promise<ToolResult> {
  let taskRecorded = false;
  let progressSeen = 0;
  live.attached = true;
  try {
    for (;;) {
      if (!taskRecorded && live.upstreamTask !== undefined) {
        const ref = live.upstreamTask;
        await ctx.step(stepsOf(ctx.attempt).task, () => ({ ...ref }));
        taskRecorded = true;
      }
      for (const question of live.questions) {
        if (question.answered || question.withdrawn !== undefined) continue;
        question.answer(await askCaller(question, ctx));
      }
      if (live.outcome !== undefined) {
        deps.calls.delete(key);
        if ('error' in live.outcome) {
          throw failedCallError(live.outcome.error, ctx.attempt, tool.policy);
        }
        return live.outcome.result;
      }
      if (live.progressSeq !== progressSeen) {
        progressSeen = live.progressSeq;
        await ctx.progress(live.progress);
      }
      await live.changed(ctx.signal);
      if (ctx.signal.aborted) throw ctx.signal.reason;
    }
  } catch (error) {
    live.attached = false;
    if (isParkSignal(error)) watchWhileParked(key, live, ctx.taskId as string, deps);
    else if (ctx.signal.aborted) await stopAfterAbort(key, live, ctx, deps);
    throw error;
  }
}

function askCaller(question: UpstreamQuestion, ctx: TaskContext): Promise<JsonObject> {
  const message = question.request.params?.['message'];
  return ctx
    .input(
      { [question.key]: question.request },
      typeof message === 'string' ? message : 'the upstream server needs input',
    )
    .then((answers) => answers[question.key] as JsonObject);
}

/**
 * Cancelled or timed out: the upstream call is cancelled, an upstream task too (a retry makes a
 * new call). A shutdown or a lost lease: an upstream task is left running, to be followed again.
 */
async function stopAfterAbort(
  key: string,
  live: LiveCall,
  ctx: TaskContext,
  deps: ProxyToolDeps,
): Promise<void> {
  deps.calls.delete(key);
  if (stopReasonOf(ctx.signal) === 'timed-out') return live.cancel(true);
  const record = await deps.store.get(ctx.taskId as string).catch(() => undefined);
  live.cancel(record === undefined || record.status === 'cancelled');
}

/** A call made without a task: no durable record, so an upstream question cannot be parked. */
async function callWithoutTask(
  tool: ProxyToolSettings,
  args: JsonObject,
  ctx: TaskContext,
  deps: ProxyToolDeps,
): Promise<ToolResult> {
  const plan: CallPlan = { kind: 'call', tool: tool.name, args, asTask: false };
  const live = new LiveCall(plan, deps, await upstreamHolder(ctx, deps));
  const stop = () => live.cancel(false);
  ctx.signal.addEventListener('abort', stop, { once: true });
  try {
    while (live.outcome === undefined) {
      for (const question of live.questions) {
        if (!question.answered) question.answer({ action: 'decline' });
      }
      await live.changed(ctx.signal);
      if (ctx.signal.aborted) throw ctx.signal.reason;
    }
  } finally {
    ctx.signal.removeEventListener('abort', stop);
  }
  if ('error' in live.outcome) throw live.outcome.error;
  return live.outcome.result;
}

/**
 * Whom an upstream call's slot counts against: its principal. A proxy without auth knows its
 * callers only as "anonymous", so an anonymous call counts against the session or connection
 * that made its task (caller-scope.ts); a call whose caller is unknown counts on its own.
 */
async function upstreamHolder(ctx: TaskContext, deps: ProxyToolDeps): Promise<string> {
  if (ctx.principal !== ANONYMOUS) return ctx.principal;
  const task =
    ctx.taskId === undefined ? undefined : await deps.store.get(ctx.taskId).catch(() => undefined);
  const scope = task === undefined ? undefined : fairScopeOfTask(task);
  return fairKeyOf(ANONYMOUS, scope ?? ctx.taskId ?? randomUUID());
}

/** A recorded step's value, or undefined, without recording anything. */
async function peekStep(ctx: TaskContext, name: string): Promise<unknown> {
  try {
    return await ctx.step(name, () => {
      throw NOT_RECORDED;
    });
  } catch (error) {
    if (error === NOT_RECORDED) return undefined;
    throw error;
  }
}

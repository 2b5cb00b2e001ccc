import { randomUUID } from 'node:crypto';
import { isParkSignal } from '../runtime/park.js';
import type { TaskContext, ToolHandler, ToolResult } from '../runtime/tool.js';
import { RpcError, RPC } from '../task/errors.js';
import type { JsonObject } from '../task/record.js';
import {
  LiveCall,
  type CallSettings,
  type UpstreamQuestion,
  type UpstreamTaskRef,
} from './live-call.js';
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
  /** Listed in --retry-tools: after a crash, call the upstream again. */
  retry: boolean;
}

const CALL_STEP = 'proxy:call';
const TASK_STEP = 'proxy:upstream-task';
const NOT_RECORDED = Symbol('not recorded');

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
    return runAttached(key, live, ctx, deps);
  };
}

async function attach(
  tool: ProxyToolSettings,
  args: JsonObject,
  ctx: TaskContext,
  deps: ProxyToolDeps,
): Promise<{ key: string; live: LiveCall }> {
  let fresh = false;
  const key = await ctx.step(CALL_STEP, () => {
    fresh = true;
    return randomUUID();
  });
  const existing = deps.calls.get(key);
  if (existing !== undefined) return { key, live: existing };
  if (!fresh)
    handBackToHolder((await peekStep(ctx, HOLDER_STEP)) as Holder | undefined, deps.owner);
  const upstreamTask = (await peekStep(ctx, TASK_STEP)) as UpstreamTaskRef | undefined;
  let live: LiveCall;
  if (upstreamTask !== undefined) {
    live = new LiveCall({ kind: 'follow', task: upstreamTask }, deps);
  } else if (fresh || tool.retry) {
    live = new LiveCall({ kind: 'call', tool: tool.name, args, asTask: tool.asTask }, deps);
  } else {
    throw new RpcError(
      RPC.INTERNAL_ERROR,
      `Task interrupted: the proxy stopped while calling '${tool.name}' upstream, and the call is not safe to repeat (list the tool in --retry-tools to re-run it).`,
    );
  }
  deps.calls.set(key, live);
  return { key, live };
}

async function runAttached(
  key: string,
  live: LiveCall,
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
        await ctx.step(TASK_STEP, () => ({ ...ref }));
        taskRecorded = true;
      }
      for (const question of live.questions) {
        if (question.answered || question.withdrawn !== undefined) continue;
        question.answer(await askCaller(question, ctx));
      }
      if (live.outcome !== undefined) {
        deps.calls.delete(key);
        if ('error' in live.outcome) throw live.outcome.error;
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
    else if (ctx.signal.aborted) await stopAfterAbort(key, live, ctx.taskId as string, deps);
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

/** Cancelled: cancel upstream too. A shutdown: leave an upstream task running to re-follow. */
async function stopAfterAbort(
  key: string,
  live: LiveCall,
  taskId: string,
  deps: ProxyToolDeps,
): Promise<void> {
  deps.calls.delete(key);
  const record = await deps.store.get(taskId).catch(() => undefined);
  live.cancel(record === undefined || record.status === 'cancelled');
}

/** A call made without a task: no durable record, so an upstream question cannot be parked. */
async function callWithoutTask(
  tool: ProxyToolSettings,
  args: JsonObject,
  ctx: TaskContext,
  deps: ProxyToolDeps,
): Promise<ToolResult> {
  const live = new LiveCall({ kind: 'call', tool: tool.name, args, asTask: false }, deps);
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

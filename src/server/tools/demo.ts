import * as z from 'zod/v4';
import type { InputRequest, JsonObject } from '../../index.js';
import { RPC, RpcError, type TaskServer } from '../index.js';
import { registerBuildReport } from './build-report.js';
import { registerOutputTools } from './output-tools.js';
import { sleep, text } from './sleep.js';

const FAST_POLL = { pollIntervalMs: 200 };

function elicit(message: string, properties: JsonObject, required: string[]): InputRequest {
  return {
    method: 'elicitation/create',
    params: { mode: 'form', message, requestedSchema: { type: 'object', properties, required } },
  };
}

function registerBasics(app: TaskServer): void {
  app.tool(
    'greet',
    {
      description: 'Says hello (always synchronous).',
      inputSchema: z.object({ name: z.string() }),
    },
    (args) => ({ content: [text(`Hello, ${args.name}!`)] }),
  );
  app.tool(
    'slow_compute',
    {
      description:
        'Sleeps for `seconds` (fractions allowed), then reports. Runs as a task when the client supports tasks.',
      inputSchema: z.object({
        seconds: z.number().min(0).max(86_400),
        label: z.string().optional(),
      }),
      task: { mode: 'optional', ...FAST_POLL },
    },
    async (args, ctx) => {
      const { seconds, label } = args;
      await ctx.progress(
        label === undefined ? `computing (${seconds}s)` : `computing ${label} (${seconds}s)`,
      );
      await sleep(seconds * 1000, ctx.signal);
      return {
        content: [text(`Finished ${label ?? 'the computation'} after ${seconds} second(s).`)],
      };
    },
  );
}

function registerFailures(app: TaskServer): void {
  app.tool(
    'failing_job',
    {
      description: 'A task that runs ~1 s and ends with a tool error (isError: true).',
      task: { mode: 'required', ...FAST_POLL },
    },
    async (_args, ctx) => {
      await sleep(1000, ctx.signal);
      return { content: [text('The job failed: the input data set was empty.')], isError: true };
    },
  );
  app.tool(
    'protocol_error_job',
    {
      description: 'A task that ends failed with a JSON-RPC error.',
      task: { mode: 'required', ...FAST_POLL },
    },
    async (_args, ctx) => {
      await sleep(200, ctx.signal);
      throw new RpcError(RPC.INTERNAL_ERROR, 'Upstream service rejected the job');
    },
  );
}

function registerInput(app: TaskServer): void {
  app.tool(
    'confirm_delete',
    {
      description: 'Asks for confirmation (elicitation) before deleting a file.',
      inputSchema: z.object({ filename: z.string() }),
      task: { mode: 'required', ...FAST_POLL },
    },
    async (args, ctx) => {
      const { filename } = args;
      const answer = await ctx.elicit('confirm', {
        message: `Delete ${filename}?`,
        requestedSchema: {
          type: 'object',
          properties: { confirm: { type: 'boolean', description: 'Really delete?' } },
          required: ['confirm'],
        },
      });
      const confirmed = answer.action === 'accept' && answer.content?.['confirm'] === true;
      return { content: [text(confirmed ? `Deleted ${filename}.` : `Kept ${filename}.`)] };
    },
  );
  app.tool(
    'multi_input',
    { description: 'Asks two questions at once.', task: { mode: 'required', ...FAST_POLL } },
    async (_args, ctx) => {
      const answers = await ctx.input({
        name: elicit('Your name?', { name: { type: 'string' } }, ['name']),
        confirm: elicit('Proceed?', { confirm: { type: 'boolean' } }, ['confirm']),
      });
      const name = (answers['name']?.['content'] as JsonObject | undefined)?.['name'];
      return {
        content: [
          text(`Thanks${typeof name === 'string' ? `, ${name}` : ''}: both answers received.`),
        ],
      };
    },
  );
}

function acceptedName(responses: Record<string, JsonObject>): string | undefined {
  const answer = responses['user_name'];
  const name = (answer?.['content'] as JsonObject | undefined)?.['name'];
  return answer?.['action'] === 'accept' && typeof name === 'string' ? name : undefined;
}

function registerMrtrComposition(app: TaskServer): void {
  app.tool(
    'test_tool_with_task',
    {
      description: 'Asks for a name before the task exists (MRTR), then greets in a task.',
      task: { mode: 'required', ...FAST_POLL },
      beforeTask: (args, pre) => {
        const name = acceptedName(pre.inputResponses);
        if (name === undefined) {
          return {
            inputRequests: {
              user_name: elicit('Who is this for?', { name: { type: 'string' } }, ['name']),
            },
          };
        }
        return { arguments: { ...args, name } };
      },
    },
    async (args, ctx) => {
      await sleep(100, ctx.signal);
      return { content: [text(`Hello, ${String(args['name'])}! Your task is done.`)] };
    },
  );
}

/**
 * The tasks-extension fixtures of the MCP conformance suite, plus a realistic long job and the
 * output and big-result tools.
 */
export default function register(app: TaskServer): void {
  registerBasics(app);
  registerFailures(app);
  registerInput(app);
  registerMrtrComposition(app);
  registerBuildReport(app);
  registerOutputTools(app);
}

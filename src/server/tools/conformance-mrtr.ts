import { randomBytes } from 'node:crypto';
import {
  acceptedContent,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type CallToolResult,
  type InputRequest,
  type InputRequiredResult,
  type McpServer,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import type { TaskServer } from '../app.js';
import { envelopeCapabilities, principalOf } from '../tasks/principal.js';
import { text } from './sleep.js';

/** What a fixture keeps between MRTR rounds, sealed into `requestState`. */
interface FlowState {
  tool: string;
  round: number;
  name?: string;
}

type Codec = RequestStateCodec<FlowState>;
type Outcome = CallToolResult | InputRequiredResult;

const NO_ARGS = z.object({});
const Name = z.object({ name: z.string() });
const Color = z.object({ color: z.string() });
const Confirm = z.object({ ok: z.boolean() });
const Context = z.object({ context: z.string() });

function form(message: string, field: string, type: 'string' | 'boolean'): InputRequest {
  const property = type === 'string' ? { type: 'string' as const } : { type: 'boolean' as const };
  return inputRequired.elicit({
    message,
    requestedSchema: { type: 'object', properties: { [field]: property }, required: [field] },
  });
}

const ASK_NAME = (): InputRequest => form('What is your name?', 'name', 'string');
const ASK_CONFIRM = (): InputRequest => form('Please confirm', 'ok', 'boolean');

function done(message: string): CallToolResult {
  return { content: [text(message)] };
}

/** The verified payload of this round's `requestState`, when it was minted for `tool`. */
function stateFor(ctx: ServerContext, tool: string): FlowState | undefined {
  const state = ctx.mcpReq.requestState<FlowState>();
  return typeof state === 'object' && state !== null && state.tool === tool ? state : undefined;
}

function samplingText(ctx: ServerContext, key: string): string | undefined {
  const view = inputResponse(ctx.mcpReq.inputResponses, key);
  if (view.kind !== 'sampling') return undefined;
  const content = view.result.content;
  const first = Array.isArray(content) ? content[0] : content;
  return first?.type === 'text' ? first.text : undefined;
}

function rootUris(ctx: ServerContext, key: string): string[] | undefined {
  const view = inputResponse(ctx.mcpReq.inputResponses, key);
  return view.kind === 'roots' ? view.roots.map((root) => root.uri) : undefined;
}

function singleRequestTools(mcp: McpServer): void {
  mcp.registerTool(
    'test_input_required_result_elicitation',
    { description: 'MRTR: asks for a name by elicitation, then greets.', inputSchema: NO_ARGS },
    (_args, ctx): Outcome => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', Name);
      if (answer === undefined) return inputRequired({ inputRequests: { user_name: ASK_NAME() } });
      return done(`Hello, ${answer.name}!`);
    },
  );
  mcp.registerTool(
    'test_input_required_result_sampling',
    { description: 'MRTR: asks the client to sample an answer.', inputSchema: NO_ARGS },
    (_args, ctx): Outcome => {
      const answer = samplingText(ctx, 'capital_question');
      if (answer !== undefined) return done(`The model said: ${answer}`);
      const question = { type: 'text' as const, text: 'What is the capital of France?' };
      return inputRequired({
        inputRequests: {
          capital_question: inputRequired.createMessage({
            messages: [{ role: 'user', content: question }],
            maxTokens: 100,
          }),
        },
      });
    },
  );
  mcp.registerTool(
    'test_input_required_result_list_roots',
    { description: "MRTR: asks for the client's roots.", inputSchema: NO_ARGS },
    (_args, ctx): Outcome => {
      const roots = rootUris(ctx, 'client_roots');
      if (roots !== undefined) return done(`Client roots: ${roots.join(', ') || '(none)'}`);
      return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    },
  );
}

function statefulTools(mcp: McpServer, codec: Codec): void {
  for (const tool of [
    'test_input_required_result_request_state',
    'test_input_required_result_tampered_state',
  ]) {
    mcp.registerTool(
      tool,
      {
        description: 'MRTR: a confirmation whose round trip carries signed requestState.',
        inputSchema: NO_ARGS,
      },
      async (_args, ctx): Promise<Outcome> => {
        const confirmed = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', Confirm);
        if (stateFor(ctx, tool)?.round === 1 && confirmed !== undefined) {
          return done(`state-ok: confirmed=${String(confirmed.ok)}`);
        }
        const requestState = await codec.mint({ tool, round: 1 }, ctx);
        return inputRequired({ inputRequests: { confirm: ASK_CONFIRM() }, requestState });
      },
    );
  }
  const multiple = 'test_input_required_result_multiple_inputs';
  mcp.registerTool(
    multiple,
    { description: 'MRTR: elicitation, sampling and roots asked at once.', inputSchema: NO_ARGS },
    async (_args, ctx): Promise<Outcome> => {
      const name = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', Name);
      const greeting = samplingText(ctx, 'greeting');
      const roots = rootUris(ctx, 'client_roots');
      if (stateFor(ctx, multiple) !== undefined && name && greeting && roots) {
        return done(`${greeting} ${name.name} (roots: ${roots.join(', ')})`);
      }
      const prompt = { type: 'text' as const, text: 'Generate a greeting' };
      return inputRequired({
        inputRequests: {
          user_name: ASK_NAME(),
          greeting: inputRequired.createMessage({
            messages: [{ role: 'user', content: prompt }],
            maxTokens: 50,
          }),
          client_roots: inputRequired.listRoots(),
        },
        requestState: await codec.mint({ tool: multiple, round: 1 }, ctx),
      });
    },
  );
}

function multiRoundTool(mcp: McpServer, codec: Codec): void {
  const tool = 'test_input_required_result_multi_round';
  const askStep1 = async (ctx: ServerContext): Promise<Outcome> =>
    inputRequired({
      inputRequests: { step1: form('Step 1: What is your name?', 'name', 'string') },
      requestState: await codec.mint({ tool, round: 1 }, ctx),
    });
  mcp.registerTool(
    tool,
    {
      description: 'MRTR: two questions in two rounds, state carried between them.',
      inputSchema: NO_ARGS,
    },
    async (_args, ctx): Promise<Outcome> => {
      const state = stateFor(ctx, tool);
      const responses = ctx.mcpReq.inputResponses;
      if (state?.round === 2 && state.name !== undefined) {
        const color = acceptedContent(responses, 'step2', Color);
        if (color !== undefined) return done(`${state.name} likes ${color.color}.`);
      }
      const name = state?.round === 1 ? acceptedContent(responses, 'step1', Name) : undefined;
      if (name === undefined) return askStep1(ctx);
      return inputRequired({
        inputRequests: {
          step2: form('Step 2: What is your favorite color?', 'color', 'string'),
        },
        requestState: await codec.mint({ tool, round: 2, name: name.name }, ctx),
      });
    },
  );
}

/** Asks only for what the request's own client capabilities allow. */
function capabilityTool(mcp: McpServer): void {
  mcp.registerTool(
    'test_input_required_result_capabilities',
    {
      description: 'MRTR: asks only through capabilities this request declared.',
      inputSchema: NO_ARGS,
    },
    (_args, ctx): Outcome => {
      const answered = Object.keys(ctx.mcpReq.inputResponses ?? {});
      if (answered.length > 0) return done(`Received: ${answered.join(', ')}`);
      const caps = (envelopeCapabilities(ctx) ?? {}) as Record<string, unknown>;
      const requests: Record<string, InputRequest> = {};
      if (caps['elicitation'] !== undefined) requests['user_name'] = ASK_NAME();
      if (caps['sampling'] !== undefined) {
        const prompt = { type: 'text' as const, text: 'Say hello' };
        requests['greeting'] = inputRequired.createMessage({
          messages: [{ role: 'user', content: prompt }],
          maxTokens: 50,
        });
      }
      if (caps['roots'] !== undefined) requests['client_roots'] = inputRequired.listRoots();
      if (Object.keys(requests).length === 0) return done('No input capability declared.');
      return inputRequired({ inputRequests: requests });
    },
  );
}

function promptFixture(mcp: McpServer): void {
  mcp.registerPrompt(
    'test_input_required_result_prompt',
    { description: 'MRTR on prompts/get: asks for the context to use.' },
    (ctx) => {
      const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_context', Context);
      if (answer === undefined) {
        return inputRequired({
          inputRequests: {
            user_context: form('What context should the prompt use?', 'context', 'string'),
          },
        });
      }
      return {
        messages: [{ role: 'user', content: text(`Use this context: ${answer.context}`) }],
      };
    },
  );
}

/**
 * The SEP-2322 (MRTR) fixtures of the `input-required-result-*` scenarios. Their `requestState`
 * is HMAC-signed with a key made per process, bound to the method and the caller, and verified
 * by the SDK before any handler runs (a tampered state answers -32602).
 */
export function registerMrtrFixtures(app: TaskServer): void {
  const codec = createRequestStateCodec<FlowState>({
    key: randomBytes(32),
    bind: (ctx) => `${ctx.mcpReq.method}\0${principalOf(ctx)}`,
  });
  app.verifyRequestState((state, ctx) => codec.verify(state, ctx));
  app.configure((mcp) => {
    singleRequestTools(mcp);
    statefulTools(mcp, codec);
    multiRoundTool(mcp, codec);
    capabilityTool(mcp);
    promptFixture(mcp);
  });
}

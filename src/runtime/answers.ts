import { createRequire } from 'node:module';
import type { Ajv2020 as Ajv2020Type, ValidateFunction } from 'ajv/dist/2020.js';
import { RPC, RpcError } from '../task/errors.js';
import type { InputRequest, JsonObject, TaskRecord } from '../task/record.js';
import { withdrawalReason } from '../task/withdrawn.js';

const ELICIT_ACTIONS = new Set(['accept', 'decline', 'cancel']);
const SAMPLING_ROLES = new Set(['user', 'assistant']);
const MAX_CACHED_SCHEMAS = 256;

/**
 * Checks every answer in a `tasks/update` that is for a pending key of `task` against the
 * request it answers, before anything is stored: an elicitation `action` must be accept,
 * decline or cancel and accepted form `content` must satisfy `requestedSchema` (JSON Schema
 * 2020-12, ajv); a sampling answer must look like a CreateMessageResult and a roots answer
 * like a ListRootsResult. The first bad answer throws -32602 naming its key; nothing is stored.
 * Keys that are not pending are left to the transition, which ignores them.
 */
export function assertAnswersFit(task: TaskRecord, responses: Record<string, unknown>): void {
  for (const [key, answer] of Object.entries(responses)) {
    const request = task.inputRequests[key];
    if (request === undefined || key in task.inputResponses) continue;
    const problem = answerProblem(request, answer);
    if (problem !== undefined) {
      throw new RpcError(
        RPC.INVALID_PARAMS,
        `inputResponses.${key}: ${problem}; the task still waits for a valid answer`,
        { key },
      );
    }
  }
}

/**
 * A late answer to a question its asker withdrew (task/withdrawn.ts) is refused, whatever the
 * task's status now: it would otherwise be dropped in silence, and the caller would believe
 * the task went on with it.
 */
export function assertNotWithdrawn(task: TaskRecord, responses: Record<string, unknown>): void {
  for (const key of Object.keys(responses)) {
    const reason = withdrawalReason(task.inputResponses[key]);
    if (reason === undefined) continue;
    throw new RpcError(
      RPC.INVALID_PARAMS,
      `inputResponses.${key}: that question was withdrawn before it was answered (${reason}); ` +
        'the answer was not used',
      { key },
    );
  }
}

function answerProblem(request: InputRequest, answer: unknown): string | undefined {
  if (!isObject(answer)) return 'must be an object';
  switch (request.method) {
    case 'elicitation/create':
      return elicitationProblem(request.params ?? {}, answer);
    case 'sampling/createMessage':
      return samplingProblem(answer);
    case 'roots/list':
      return rootsProblem(answer);
    default:
      return undefined;
  }
}

function elicitationProblem(params: JsonObject, answer: JsonObject): string | undefined {
  const { action, content } = answer;
  if (typeof action !== 'string' || !ELICIT_ACTIONS.has(action)) {
    return `action must be 'accept', 'decline' or 'cancel', got ${describe(action)}`;
  }
  if (action !== 'accept' || params['mode'] === 'url') return undefined;
  if (!isObject(content)) return "an accepted form answer needs 'content' (an object)";
  const schema = params['requestedSchema'];
  return isObject(schema) ? schemaProblem(schema, content) : undefined;
}

function samplingProblem(answer: JsonObject): string | undefined {
  const { role, content, model } = answer;
  if (typeof role !== 'string' || !SAMPLING_ROLES.has(role)) {
    return `role must be 'user' or 'assistant', got ${describe(role)}`;
  }
  if (typeof model !== 'string') return "'model' must be a string";
  const blocks = Array.isArray(content) ? content : [content];
  if (blocks.length === 0 || !blocks.every((b) => isObject(b) && typeof b['type'] === 'string')) {
    return "'content' must be a content block (or a list of them) with a 'type'";
  }
  return undefined;
}

function rootsProblem(answer: JsonObject): string | undefined {
  const { roots } = answer;
  if (!Array.isArray(roots)) return "'roots' must be a list";
  if (!roots.every((root) => isObject(root) && typeof root['uri'] === 'string')) {
    return "every root needs a 'uri' string";
  }
  return undefined;
}

/**
 * Loaded on the first schema check, not at start-up: `serve` keeps its resting memory low
 * (test/cli/lazy-commands.test.ts), and most servers never see an elicitation answer. ajv is
 * CommonJS, so a synchronous require keeps the check inside the compare-and-set's change.
 */
let ajvInstance: Ajv2020Type | undefined;
function ajv(): Ajv2020Type {
  if (ajvInstance === undefined) {
    const { Ajv2020 } = createRequire(import.meta.url)('ajv/dist/2020.js') as {
      Ajv2020: typeof Ajv2020Type;
    };
    ajvInstance = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  }
  return ajvInstance;
}

const compiled = new Map<string, ValidateFunction | null>();

/**
 * A schema ajv cannot compile is the tool's bug, not the answerer's: the answer is let through
 * rather than leaving the task waiting for an answer nobody could give.
 */
function schemaProblem(schema: JsonObject, content: JsonObject): string | undefined {
  const validate = compile(schema);
  if (validate === null || validate(content)) return undefined;
  const first = validate.errors?.[0];
  if (first === undefined) return 'content does not satisfy requestedSchema';
  const at = first.instancePath === '' ? 'content' : `content${first.instancePath}`;
  return `${at} ${first.message ?? 'is invalid'} (requestedSchema)`;
}

function compile(schema: JsonObject): ValidateFunction | null {
  const key = JSON.stringify(schema);
  const cached = compiled.get(key);
  if (cached !== undefined) return cached;
  let validate: ValidateFunction | null;
  try {
    const { $schema: _dialect, ...rest } = schema;
    validate = ajv().compile(rest);
    ajv().removeSchema(rest); // the cache below is the bounded one
  } catch {
    validate = null;
  }
  if (compiled.size >= MAX_CACHED_SCHEMAS) compiled.delete(compiled.keys().next().value as string);
  compiled.set(key, validate);
  return validate;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  return value === undefined ? 'nothing' : JSON.stringify(value).slice(0, 40);
}

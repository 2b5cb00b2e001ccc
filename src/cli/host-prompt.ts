import { createInterface, type Interface } from 'node:readline/promises';
import { TaskrailClientError, type InputContext, type InputHandlers } from '../client/index.js';
import type { ProgressLine } from './host-progress.js';

type JsonObject = Record<string, unknown>;
type Answer = string | number | boolean | string[];

/**
 * Answers `elicitation/create` at the terminal, one field of `requestedSchema` at a time. When
 * standard input is not a terminal it refuses with INPUT_UNAVAILABLE (the CLI exits 4 and says
 * how to answer later) instead of guessing.
 */
export function terminalInput(progress: ProgressLine, interrupt: AbortSignal): InputHandlers {
  return {
    elicitation: async (params, context) => {
      if (process.stdin.isTTY !== true) {
        throw new TaskrailClientError(
          'INPUT_UNAVAILABLE',
          `task ${context.taskId ?? '(not yet created)'} needs input ("${String(params.message ?? '')}") ` +
            `but standard input is not a terminal; answer it from a terminal with: taskrail tasks answer ${context.taskId ?? 'ID'}`,
        );
      }
      progress.pause();
      const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
      // Ctrl-C at a prompt means the same as anywhere else in `call`: cancel the task.
      rl.on('SIGINT', () => process.emit('SIGINT'));
      const signal = AbortSignal.any([interrupt, context.signal]);
      try {
        return await elicit(rl, params, context, signal);
      } finally {
        rl.close();
        progress.resume();
      }
    },
  };
}

async function elicit(
  rl: Interface,
  params: JsonObject,
  context: InputContext,
  signal: AbortSignal,
): Promise<JsonObject> {
  process.stderr.write(`\n${context.tool} asks: ${String(params.message ?? '')}\n`);
  process.stderr.write('(type :decline or :cancel at any prompt to refuse)\n');
  if (params.mode === 'url') {
    process.stderr.write(`open ${String(params.url)} and press Enter when done\n`);
    const line = (await rl.question('> ', { signal })).trim();
    return refusal(line) ?? { action: 'accept' };
  }
  const schema = (params.requestedSchema ?? {}) as {
    properties?: Record<string, JsonObject>;
    required?: string[];
  };
  const content: Record<string, Answer> = {};
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    const required = schema.required?.includes(name) === true;
    for (;;) {
      const line = (await rl.question(fieldPrompt(name, field, required), { signal })).trim();
      const refused = refusal(line);
      if (refused !== undefined) return refused;
      if (line === '' && field.default !== undefined) {
        content[name] = field.default as Answer;
        break;
      }
      if (line === '' && !required) break;
      const value = parseField(line, field);
      if (value !== undefined) {
        content[name] = value;
        break;
      }
      process.stderr.write(`  please enter ${describe(field)}\n`);
    }
  }
  return { action: 'accept', content };
}

function refusal(line: string): JsonObject | undefined {
  if (line === ':decline') return { action: 'decline' };
  if (line === ':cancel') return { action: 'cancel' };
  return undefined;
}

function fieldPrompt(name: string, field: JsonObject, required: boolean): string {
  const label = typeof field.title === 'string' ? field.title : name;
  const help = typeof field.description === 'string' ? ` (${field.description})` : '';
  const def = field.default === undefined ? '' : ` [${JSON.stringify(field.default)}]`;
  return `${label}${help} — ${describe(field)}${required ? '' : ', optional'}${def}: `;
}

function describe(field: JsonObject): string {
  const choices = enumOf(field);
  if (choices !== undefined) return `one of ${choices.join(' | ')}`;
  if (field.type === 'array')
    return `comma-separated values from ${(enumOf(field.items as JsonObject) ?? []).join(' | ')}`;
  if (field.type === 'boolean') return 'yes or no';
  if (field.type === 'integer') return 'a whole number';
  if (field.type === 'number') return 'a number';
  return 'text';
}

function enumOf(field: JsonObject | undefined): string[] | undefined {
  if (field === undefined) return undefined;
  if (Array.isArray(field.enum)) return field.enum.map(String);
  const options = (field.oneOf ?? field.anyOf) as Array<{ const?: unknown }> | undefined;
  if (Array.isArray(options) && options.every((o) => o.const !== undefined))
    return options.map((o) => String(o.const));
  return undefined;
}

/** The typed value of one answer, or undefined when it does not fit the field. */
export function parseField(line: string, field: JsonObject): Answer | undefined {
  const choices = enumOf(field);
  if (field.type === 'boolean') {
    if (/^(y|yes|true)$/i.test(line)) return true;
    if (/^(n|no|false)$/i.test(line)) return false;
    return undefined;
  }
  if (field.type === 'integer' || field.type === 'number') {
    const n = Number(line);
    if (line === '' || !Number.isFinite(n) || (field.type === 'integer' && !Number.isInteger(n)))
      return undefined;
    return n;
  }
  if (field.type === 'array') {
    const values = line
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    const allowed = enumOf(field.items as JsonObject);
    return allowed === undefined || values.every((v) => allowed.includes(v)) ? values : undefined;
  }
  if (choices !== undefined) return choices.includes(line) ? line : undefined;
  return line === '' ? undefined : line;
}

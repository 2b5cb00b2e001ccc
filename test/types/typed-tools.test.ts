import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fromJsonSchema } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import { createTaskServer, type TaskServer } from '../../src/server/index.js';
import { MemoryTaskStore } from '../../src/stores/memory/index.js';
import type { JsonObject } from '../../src/task/record.js';
import { rpc } from '../server/support.js';

/**
 * The types of `app.tool`: this file compiles in the test build, so every positive case must
 * type-check and every `@ts-expect-error` must meet an error. The handlers also run, so the
 * argument types are checked against what a call really hands them.
 */

type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

function expectTypeOf<Actual>(_value: Actual): {
  toEqualTypeOf<Expected>(..._proof: Equal<Actual, Expected> extends true ? [] : [never]): void;
} {
  return { toEqualTypeOf: () => undefined };
}

const Measure = z.object({ chars: z.number(), unit: z.string().default('chars') });
const Doubled = z.object({ doubled: z.number(), unit: z.string() });

function registerTyped(app: TaskServer, seen: unknown[]): void {
  app.tool(
    'double',
    { description: 'doubles', inputSchema: Measure, outputSchema: Doubled },
    (args) => {
      expectTypeOf(args).toEqualTypeOf<{ chars: number; unit: string }>();
      seen.push(args);
      const doubled = { doubled: args.chars * 2, unit: args.unit };
      return {
        content: [{ type: 'text', text: JSON.stringify(doubled) }],
        structuredContent: doubled,
      };
    },
  );
}

function registerUntyped(app: TaskServer): void {
  app.tool('free', { description: 'no schema' }, (args) => {
    expectTypeOf(args).toEqualTypeOf<JsonObject>();
    return { content: [] };
  });
  const plain = fromJsonSchema({ type: 'object', properties: { n: { type: 'number' } } });
  app.tool('plain', { description: 'JSON Schema', inputSchema: plain }, (args) => {
    expectTypeOf(args).toEqualTypeOf<JsonObject>();
    // @ts-expect-error: plain JSON Schema says nothing TypeScript can see, so `n` is unknown
    const twice: number = args['n'] * 2;
    return { content: [{ type: 'text', text: String(twice) }] };
  });
  // A bare `new Promise` in a handler takes its type from the signature.
  app.tool('hold', { description: 'held', task: true }, (_args, ctx) => {
    return new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', reject));
  });
}

function registerMistakes(app: TaskServer): void {
  app.tool('wrong_use', { description: 'x', inputSchema: Measure }, (args) => {
    // @ts-expect-error: chars is a number
    args.chars.toUpperCase();
    // @ts-expect-error: no such argument
    return { content: [{ type: 'text', text: String(args.width) }] };
  });
  app.tool(
    'wrong_type',
    { description: 'x', inputSchema: Measure, outputSchema: Doubled },
    // @ts-expect-error: doubled must be a number
    (args) => ({ content: [], structuredContent: { doubled: String(args.chars), unit: 'x' } }),
  );
  app.tool(
    'missing_structured',
    { description: 'x', outputSchema: Doubled },
    // @ts-expect-error: a tool with an outputSchema returns structuredContent (or an error)
    () => ({ content: [{ type: 'text', text: 'done' }] }),
  );
  app.tool(
    'misspelt',
    // @ts-expect-error: `tasks` is no setting (`task` is)
    { description: 'x', tasks: true },
    () => ({ content: [] }),
  );
  app.tool('error_result', { description: 'x', outputSchema: Doubled }, () => ({
    content: [{ type: 'text', text: 'could not' }],
    isError: true,
  }));
}

describe('typed tools', () => {
  const store = new MemoryTaskStore();
  const app = createTaskServer({ store, name: 'types', version: '1.0.0' });
  const seen: unknown[] = [];
  let url = '';

  before(async () => {
    registerTyped(app, seen);
    registerUntyped(app);
    registerMistakes(app);
    ({ url } = await app.listen(0, '127.0.0.1'));
  });
  after(async () => {
    await app.close(1000);
    await store.close();
  });

  it('hands the handler what the inputSchema parses to (defaults filled in)', async () => {
    const reply = await rpc(url, 'tools/call', { name: 'double', arguments: { chars: 21 } });
    assert.deepEqual(seen, [{ chars: 21, unit: 'chars' }]);
    assert.deepEqual(reply.body.result?.['structuredContent'], { doubled: 42, unit: 'chars' });
  });
});

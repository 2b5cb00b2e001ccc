/** The engine benchmark's tools: a 10 ms wait, and one that parks on a question. */
import type { ToolCatalog } from '../../src/runtime/api.js';
import type { RunnableTool } from '../../src/runtime/tool.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const tools: RunnableTool[] = [
  {
    name: 'ten_ms',
    task: { mode: 'optional' },
    handler: async () => {
      await sleep(10);
      return { content: [] };
    },
  },
  {
    name: 'park',
    task: { mode: 'optional' },
    handler: async (_a, ctx) => {
      await ctx.input({
        q: {
          method: 'elicitation/create',
          params: { message: 'q', requestedSchema: { type: 'object', properties: {} } },
        },
      });
      return { content: [] };
    },
  },
];
export const catalog: ToolCatalog = { get: (name) => tools.find((t) => t.name === name) };

import type { HostProfile } from './model-policy.js';
import { CODEX, CODEX_VERSION, codexUnavailable, runCodex } from './codex.js';
import { COPILOT, COPILOT_VERSION, copilotEnv, copilotUnavailable, runCopilot } from './copilot.js';
import { GEMINI, GEMINI_VERSION, geminiEnv, geminiUnavailable, runGemini } from './gemini.js';
import { cleanEnv, versionOf, type HostRun } from './run.js';
import { geminiApi } from '../vendors/gemini.js';
import { openAiChat } from '../vendors/openai-chat.js';
import { openAiResponses } from '../vendors/openai-responses.js';
import type { Vendor } from '../vendors/scripted-model.js';

export interface RunOptions {
  experimental?: boolean;
}

/** One real host: how to install and run it, its model API, and how its model sees taskrail. */
export interface Host {
  profile: HostProfile;
  /** The pinned version, as its `--version` prints it. */
  version: string;
  vendor: Vendor;
  unavailable(): string | undefined;
  /** Its `--version` output. */
  versionLine(): string;
  run(
    modelUrl: string,
    serverUrl: string,
    timeoutMs: number,
    options?: RunOptions,
  ): Promise<HostRun>;
}

export const codex: Host = {
  profile: {
    name: 'codex',
    tool: (name) => `mcp__taskrail.${name}`,
    // A catalogued model finds MCP tools through Codex's client-side tool_search first.
    preamble: (history) =>
      history.some((exchange) => exchange.tool === 'tool_search')
        ? undefined
        : { tool: 'tool_search', args: { query: 'taskrail', limit: 50 } },
    readResource: (uri) => ({ tool: 'read_mcp_resource', args: { server: 'taskrail', uri } }),
    // Codex keeps ~48,000 characters of a tool output whole for a catalogued model.
    pageChars: 40_000,
  },
  version: CODEX_VERSION,
  vendor: openAiResponses,
  unavailable: codexUnavailable,
  versionLine: () => versionOf(CODEX, cleanEnv()),
  run: (modelUrl, serverUrl, timeoutMs) => runCodex(modelUrl, serverUrl, timeoutMs),
};

export const gemini: Host = {
  profile: {
    name: 'gemini-cli',
    tool: (name) => `mcp_taskrail_${name}`,
    readResource: (uri) => ({ tool: 'read_mcp_resource', args: { uri } }),
    offersRead: (offered) => offered.includes('read_mcp_resource'),
    readsListedUriOnly: true,
    pageChars: 40_000,
  },
  version: GEMINI_VERSION,
  vendor: geminiApi,
  unavailable: geminiUnavailable,
  versionLine: () => versionOf(GEMINI, geminiEnv('/nonexistent', 'http://127.0.0.1:9')),
  run: (modelUrl, serverUrl, timeoutMs) => runGemini(modelUrl, serverUrl, timeoutMs),
};

export const copilot: Host = {
  profile: {
    name: 'copilot',
    tool: (name) => `taskrail-${name}`,
    // No resource tool; output over 20,480 bytes is spilled to a file with a 500-char preview.
    pageChars: 15_000,
    // --experimental follows a required tool as a task in a background agent the model reads.
    followUp: (seen) => {
      const agent = /agent_id: ([\w-]+)\. Use read_agent/.exec(seen)?.[1];
      const running = /agent_id: ([\w-]+)[^\n]*\b(running|in progress)\b/i.exec(seen)?.[1];
      const id = agent ?? running;
      return id === undefined
        ? undefined
        : { tool: 'read_agent', args: { agent_id: id, wait: true } };
    },
  },
  version: COPILOT_VERSION,
  vendor: openAiChat,
  unavailable: copilotUnavailable,
  versionLine: () => versionOf(COPILOT, copilotEnv('/tmp', 'http://127.0.0.1:9')),
  run: (modelUrl, serverUrl, timeoutMs, options) =>
    runCopilot(modelUrl, serverUrl, timeoutMs, options),
};

import { isObject, META } from '../../protocol/index.js';

/** Below the 60 s after which common hosts (Claude Code `-p`, many SDK clients) give up. */
export const DEFAULT_INLINE_WAIT_MS = 45_000;

/**
 * What a host shows its model of a tool result: `structured` only `structuredContent` when
 * there is one (Claude Code, Codex CLI); `both` the text blocks and then the JSON of
 * `structuredContent` (Gemini CLI, Copilot CLI); `either` not known, so taskrail puts the same
 * words in both (the JSON copy as text, the handle's instruction in `structuredContent`).
 */
export type ResultView = 'structured' | 'both' | 'either';

/** What taskrail does differently for one host (docs/hosts.md has the measurements behind it). */
export interface HostProfile {
  /** The host's name in docs and logs. */
  host: string;
  /** How long the host waits for a tool before giving up; an inline wait stays below it. */
  toolTimeoutMs?: number;
  /** The inline wait when `--inline-wait` is not given. */
  inlineWaitMs: number;
  /** The most characters of a result (text and links) handed out to this host. */
  resultChars?: number;
  /** The most UTF-8 bytes of a result, every block and the JSON of structuredContent together. */
  resultBytes?: number;
  view: ResultView;
  /**
   * Follows a call as a task only when `tools/list` marks the tool `execution.taskSupport:
   * "required"`, though it declares the tasks extension (Copilot CLI `--experimental`): its
   * tools are listed with that field, and an `optional` tool is answered as for a host without
   * tasks (inline, or a handle), never with a CreateTaskResult it cannot read.
   */
  tasksOnlyWhenRequired?: boolean;
}

/** A host taskrail does not recognise: today's safe defaults. */
export const UNKNOWN_HOST: HostProfile = {
  host: 'unknown',
  inlineWaitMs: DEFAULT_INLINE_WAIT_MS,
  view: 'either',
};

/** `clientInfo.name` as each host sends it (checked against the real binaries). */
const PROFILES: ReadonlyMap<string, HostProfile> = new Map<string, HostProfile>([
  // Print mode gives up after 60 s; interactive mode declares tasks. Its 50,000-character
  // cut-off is above the default --max-result-chars, and a tool's `anthropic/maxResultSizeChars`
  // moves it: the server's own bound applies.
  [
    'claude-code',
    { host: 'Claude Code', toolTimeoutMs: 60_000, inlineWaitMs: 45_000, view: 'structured' },
  ],
  // 300 s tool time-out; ~12,000 characters whole for a model outside its catalogue.
  [
    'codex-mcp-client',
    {
      host: 'Codex CLI',
      toolTimeoutMs: 300_000,
      inlineWaitMs: 240_000,
      resultChars: 10_000,
      view: 'structured',
    },
  ],
  // 10 min tool time-out; no cut-off seen below 200,000 characters.
  [
    'gemini-cli-mcp-client',
    { host: 'Gemini CLI', toolTimeoutMs: 600_000, inlineWaitMs: 480_000, view: 'both' },
  ],
  // ~180 s tool time-out; output over 20,480 bytes goes to a temp file with a 500-char preview.
  [
    'copilot-cli',
    {
      host: 'Copilot CLI',
      toolTimeoutMs: 180_000,
      inlineWaitMs: 150_000,
      resultBytes: 18_000,
      view: 'both',
      tasksOnlyWhenRequired: true,
    },
  ],
  // A 2025-11-25 host with tasks; nothing measured that calls for other settings.
  ['Visual Studio Code', { host: 'VS Code', inlineWaitMs: DEFAULT_INLINE_WAIT_MS, view: 'either' }],
]);

/** The profile of the host that sent `clientInfo` (`initialize`, or the 2026-07-28 `_meta`). */
export function hostProfile(clientInfo: unknown): HostProfile {
  const name = isObject(clientInfo) ? clientInfo['name'] : undefined;
  return (typeof name === 'string' && PROFILES.get(name)) || UNKNOWN_HOST;
}

/** The `clientInfo` a 2026-07-28 request carries in its `_meta` (or its SDK envelope). */
export function envelopeClientInfo(meta: unknown): unknown {
  return isObject(meta) ? meta[META.clientInfo] : undefined;
}

/** Margin kept between an inline wait and the host's own time-out. */
const TIMEOUT_MARGIN_MS = 10_000;

/**
 * The inline wait for this host: the one configured (`--inline-wait`), else the host's own;
 * either way below the host's time-out, so the host gets an answer before it gives up.
 */
export function inlineWaitFor(profile: HostProfile, configured: number | undefined): number {
  const wanted = configured ?? profile.inlineWaitMs;
  if (profile.toolTimeoutMs === undefined) return wanted;
  const bound = Math.max(1000, profile.toolTimeoutMs - TIMEOUT_MARGIN_MS);
  return Math.min(wanted, bound);
}

/** The characters of a result handed out to this host: the server's bound, or the host's if less. */
export function resultCharsFor(profile: HostProfile, serverMax: number): number {
  return Math.min(serverMax, profile.resultChars ?? serverMax, profile.resultBytes ?? serverMax);
}

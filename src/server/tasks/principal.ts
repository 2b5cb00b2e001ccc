import type { AuthInfo } from '@modelcontextprotocol/server';
import { META } from '../../protocol/constants.js';

export const ANONYMOUS = 'anonymous';

/** The names taskrail keeps for itself: `anonymous` and its scoped keys (`anonymous#…`), after any `~`. */
const RESERVED = /^~*anonymous(?:#|$)/;

/**
 * The principal an authenticated name (a token's, an OAuth `sub`, a host's AuthInfo) is kept
 * under. A name that reads as a reserved one gets one more leading `~` (`anonymous` becomes
 * `~anonymous`), so no token can act as the anonymous principal or take an anonymous caller's
 * key in a fair bound; one-to-one, and every other name stays as it was (tasks stored before
 * keep their owner).
 */
export function authenticatedPrincipal(name: string): string {
  return RESERVED.test(name) ? `~${name}` : name;
}

/** Marks AuthInfo whose `extra.principal` taskrail set (a principal, not a name to keep). */
const OWN = 'taskrail/principal';

/** The AuthInfo handed to the SDK: the principal travels in `extra.principal`. */
export function authInfoFor(
  principal: string,
  token: string,
  details: {
    clientId?: string | undefined;
    scopes?: string[];
    expiresAt?: number | undefined;
  } = {},
): AuthInfo {
  return {
    token,
    clientId: details.clientId ?? principal,
    scopes: details.scopes ?? [],
    ...(details.expiresAt === undefined ? {} : { expiresAt: details.expiresAt }),
    extra: { principal, [OWN]: true },
  };
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The one principal rule, for every path (fast path, SDK, 2025-11-25 sessions): taskrail's
 * own `extra.principal` (set by authInfoFor, already a principal); for AuthInfo set by a host
 * application's middleware (`req.auth`), which anonymousAuth re-issues as taskrail's own, its
 * `extra.principal`, else `extra.sub`, else `clientId`, as authenticatedPrincipal keeps it;
 * without any, `anonymous`.
 */
export function principalOfAuthInfo(authInfo: AuthInfo | undefined): string {
  if (authInfo === undefined) return ANONYMOUS;
  const extra = authInfo.extra ?? {};
  if (extra[OWN] === true) return nonEmpty(extra['principal']) ?? ANONYMOUS;
  const name =
    nonEmpty(extra['principal']) ?? nonEmpty(extra['sub']) ?? nonEmpty(authInfo.clientId);
  return name === undefined ? ANONYMOUS : authenticatedPrincipal(name);
}

/**
 * The AuthInfo of an anonymous HTTP caller: no token, only its connection's scope (for the
 * SDK path, where the task it makes learns whom its fair shares count against).
 */
export function anonymousAuthInfo(connectionScope: string): AuthInfo {
  // authInfoFor's fields, in one literal. One per connection (caller-scope.ts): shared by its
  // requests, so nothing may change it.
  const extra = { principal: ANONYMOUS, [OWN]: true, connection: connectionScope };
  return { token: '', clientId: ANONYMOUS, scopes: [], extra };
}

/** The connection scope anonymousAuthInfo put there, if any. */
export function connectionOfAuthInfo(authInfo: AuthInfo | undefined): string | undefined {
  if (authInfo?.extra?.[OWN] !== true) return undefined;
  return nonEmpty(authInfo.extra['connection']);
}

/**
 * A host's AuthInfo as taskrail's own: the same fields, with the principal decided once (a
 * second reading must not add another `~`).
 */
export function ownAuthInfo(preset: AuthInfo): AuthInfo {
  const principal = principalOfAuthInfo(preset);
  return { ...preset, extra: { ...(preset.extra ?? {}), principal, [OWN]: true } };
}

export function principalOf(ctx: {
  http?: { authInfo?: AuthInfo | undefined } | undefined;
}): string {
  return principalOfAuthInfo(ctx.http?.authInfo);
}

/** The client capabilities THIS request declared (2026-07-28 wire only; undefined on the 2025-11-25 wire). */
export function envelopeCapabilities(ctx: { mcpReq: { envelope?: object | undefined } }): unknown {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return envelope?.[META.clientCapabilities];
}

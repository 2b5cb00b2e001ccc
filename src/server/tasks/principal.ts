import type { AuthInfo } from '@modelcontextprotocol/server';
import { META } from '../../protocol/constants.js';

export const ANONYMOUS = 'anonymous';

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
    extra: { principal },
  };
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The one principal rule, for every path (fast path, SDK, 2025-11-25 sessions): taskrail's
 * own `extra.principal`; for AuthInfo set by a host application's middleware (`req.auth`),
 * its `extra.sub`, else its `clientId`; without any, `anonymous`.
 */
export function principalOfAuthInfo(authInfo: AuthInfo | undefined): string {
  if (authInfo === undefined) return ANONYMOUS;
  const extra = authInfo.extra ?? {};
  return (
    nonEmpty(extra['principal']) ??
    nonEmpty(extra['sub']) ??
    nonEmpty(authInfo.clientId) ??
    ANONYMOUS
  );
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

import type { AuthInfo } from '@modelcontextprotocol/server';

export const ANONYMOUS = 'anonymous';

/** The AuthInfo handed to the SDK: the principal travels as `clientId`. */
export function authInfoFor(principal: string, token: string): AuthInfo {
  return { token, clientId: principal, scopes: [], extra: { principal } };
}

export function principalOf(ctx: {
  http?: { authInfo?: AuthInfo | undefined } | undefined;
}): string {
  const principal = ctx.http?.authInfo?.extra?.['principal'];
  return typeof principal === 'string' && principal !== '' ? principal : ANONYMOUS;
}

/** The client capabilities THIS request declared (modern era only; undefined on the legacy wire). */
export function envelopeCapabilities(ctx: { mcpReq: { envelope?: object | undefined } }): unknown {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return envelope?.['io.modelcontextprotocol/clientCapabilities'];
}

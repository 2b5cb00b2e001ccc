import { createHash } from 'node:crypto';
import type { TaskRecord } from '../../task/record.js';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { ANONYMOUS, anonymousAuthInfo } from './principal.js';
import { CALL_SESSION_META, SESSION_META } from './task-uri.js';

/*
 * Without auth every caller is `anonymous`, so its tasks are kept apart by where they were
 * made. Lists (`tasks/list`, `resources/list`) show a caller only what its own session made;
 * everything asked by id (tasks/get|result|cancel|update, resources/read|subscribe, a listen
 * stream) is its id's holder's: the id (144 random bits) is told only to the caller that made
 * the task, and is what a client whose session the server forgot (a restart) still holds.
 */

/**
 * Who is asking, as far as task ownership goes: the principal and, on a 2025-11-25 session
 * (or the one stdio session), that session. A stateless 2026-07-28 caller has none.
 */
export interface Asker {
  principal: string;
  session: string | undefined;
}

/**
 * The session an anonymous task belongs to: the one that created it, or that ran it behind a
 * plain `tools/call`. Undefined for a task made statelessly (2026-07-28): it is its id's
 * holder's, and nobody lists it.
 */
export function sessionOfTask(task: TaskRecord): string | undefined {
  const made = task.meta[SESSION_META] ?? task.meta[CALL_SESSION_META];
  return typeof made === 'string' ? made : undefined;
}

/**
 * Where an anonymous caller's task made without a session remembers the connection that made
 * it (a digest, never the address): the caller its fair shares count it against.
 */
export const CONNECTION_META = 'callerConnection';

/** A connection's scope and AuthInfo, made once: a keep-alive connection asks on every request. */
interface ConnectionIdentity {
  scope: string;
  authInfo: AuthInfo;
}
const identities = new Map<string, ConnectionIdentity>();
/** Enough for every connection of a busy server; past it the memo starts over. */
const MAX_REMEMBERED_SCOPES = 4096;

function identityOf(connection: string): ConnectionIdentity {
  const known = identities.get(connection);
  if (known !== undefined) return known;
  const scope = `c:${createHash('sha256').update(connection).digest('base64url').slice(0, 16)}`;
  const identity = { scope, authInfo: anonymousAuthInfo(scope) };
  if (identities.size >= MAX_REMEMBERED_SCOPES) identities.clear();
  identities.set(connection, identity);
  return identity;
}

/** A connection (`address:port`) as an anonymous caller's scope: a short digest. */
export function connectionScope(connection: string): string {
  return identityOf(connection).scope;
}

/**
 * What an anonymous HTTP caller's handlers see as its AuthInfo: the same object for every
 * request of one connection (nothing changes it; see anonymousAuthInfo).
 */
export function anonymousConnectionInfo(connection: string): AuthInfo {
  return identityOf(connection).authInfo;
}

/**
 * Whom an anonymous task counts against in a fair bound: the session that made it, else the
 * connection; undefined when neither is known.
 */
export function fairScopeOfTask(task: TaskRecord): string | undefined {
  const connection = task.meta[CONNECTION_META];
  return sessionOfTask(task) ?? (typeof connection === 'string' ? connection : undefined);
}

/**
 * Whether `task` is in `asker`'s lists (`resources/list`): an authenticated caller lists all its
 * principal's tasks; an anonymous one only what its own session made, so a stateless anonymous
 * caller lists none (nothing tells one anonymous caller from another there).
 */
export function listedFor(task: TaskRecord, asker: Asker): boolean {
  if (task.principal !== asker.principal) return false;
  if (asker.principal !== ANONYMOUS) return true;
  return asker.session !== undefined && sessionOfTask(task) === asker.session;
}

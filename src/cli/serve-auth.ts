import type { Command } from 'commander';
import { DEFAULT_ADMIN_SCOPE, loadAdminTokenFile } from '../server/admin/index.js';
import type { TaskServerOptions } from '../server/app.js';
import { loadTokenFile } from '../server/http/auth.js';
import { discoverIssuer } from '../server/oauth/discovery.js';
import { parseAuthSpec, parseResourceUrl, parseScope, type AuthSpec } from './options.js';

export interface AuthFlags {
  auth?: AuthSpec;
  admin?: AuthSpec;
  resource?: string;
  scope?: string;
  adminScope?: string;
}

/** The `--auth`, `--admin`, `--resource`, `--scope` and `--admin-scope` options of `serve`. */
export function addAuthOptions(command: Command): Command {
  return command
    .option(
      '--auth <tokens:FILE|oauth:ISSUER_URL>',
      'require bearer tokens from FILE ({"token": "principal"}) or OAuth access tokens of ISSUER_URL',
      parseAuthSpec,
    )
    .option(
      '--admin <tokens:FILE|oauth:ISSUER_URL>',
      'serve /dashboard and /metrics to the admin tokens in FILE, or to OAuth tokens with the admin scope',
      parseAuthSpec,
    )
    .option(
      '--resource <url>',
      'OAuth: this server as tokens name it in "aud" (default: the URL printed at start)',
      parseResourceUrl,
    )
    .option('--scope <name>', 'OAuth: a scope every caller token must carry', parseScope)
    .option(
      '--admin-scope <name>',
      `OAuth: admin read scope; <name>:write may also cancel and answer (default ${DEFAULT_ADMIN_SCOPE})`,
      parseScope,
    );
}

type ServerAuth = Pick<TaskServerOptions, 'auth' | 'admin'>;

/** Reads token files and checks that OAuth issuers answer, with errors that say what to fix. */
export async function resolveAuth(flags: AuthFlags): Promise<ServerAuth> {
  const { auth, admin } = flags;
  if (auth?.kind !== 'oauth' && admin?.kind !== 'oauth') {
    if (flags.resource !== undefined || flags.scope !== undefined) {
      throw new Error('--resource and --scope need --auth oauth:ISSUER_URL');
    }
    if (flags.adminScope !== undefined)
      throw new Error('--admin-scope needs --admin oauth:ISSUER_URL');
  }
  const resolved: ServerAuth = {};
  if (auth?.kind === 'tokens') resolved.auth = { tokens: await loadTokenFile(auth.file) };
  if (auth?.kind === 'oauth') {
    await discoverIssuer(auth.issuer);
    resolved.auth = {
      oauth: {
        issuer: auth.issuer,
        ...(flags.resource === undefined ? {} : { resource: flags.resource }),
        ...(flags.scope === undefined ? {} : { scope: flags.scope }),
      },
    };
  }
  if (admin?.kind === 'tokens') resolved.admin = { tokens: await loadAdminTokenFile(admin.file) };
  if (admin?.kind === 'oauth') {
    if (auth?.kind !== 'oauth' || auth.issuer !== admin.issuer) await discoverIssuer(admin.issuer);
    resolved.admin = {
      oauth: {
        issuer: admin.issuer,
        ...(flags.adminScope === undefined ? {} : { scope: flags.adminScope }),
        ...(flags.resource === undefined ? {} : { resource: flags.resource }),
      },
    };
  }
  return resolved;
}

import { join } from 'node:path';
import { after, before } from 'node:test';
import { startServe, tempDir, type Serve } from '../../client/support.js';
import type { Host } from './hosts.js';

const TOOLS = join(process.cwd(), '.build/test/hosts/others/tools.js');

/** Why `host` cannot run here, said in a `# skipping WHAT: why` line; undefined when it can. */
export function skipReason(host: Host, what: string): string | undefined {
  const skip = host.unavailable();
  if (skip !== undefined) process.stdout.write(`# skipping ${what}: ${skip}\n`);
  return skip;
}

/**
 * Called in a describe: `taskrail serve` with this folder's test tools, in a temp folder named
 * after `prefix`, up before the suite's tests and gone after them.
 */
export function serveTools(prefix: string): { readonly url: string } {
  const dir = tempDir(prefix);
  let serve: Serve;
  before(async () => {
    serve = await startServe(dir.path, ['--tools', TOOLS]);
  });
  after(async () => {
    await serve.stop();
    dir.remove();
  });
  return {
    get url() {
      return serve.url;
    },
  };
}

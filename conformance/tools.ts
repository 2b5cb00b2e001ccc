import type { TaskServer } from '../src/server/app.js';
import { registerContentTools, registerResourcesAndPrompts } from './content.js';
import { registerDiagnosticTools, registerStatelessDiagnostics } from './diagnostics.js';
import { registerMrtrFixtures } from './mrtr.js';
import { registerSchemaFixtures } from './schemas.js';
import registerDemo from '../src/server/tools/demo.js';

/** Everything the conformance suite's 2026-07-28 server scenarios call: demo plus the base fixtures. */
export default function register(app: TaskServer): void {
  registerDemo(app);
  registerContentTools(app);
  registerStatelessDiagnostics(app);
  registerMrtrFixtures(app);
  app.configure((mcp) => {
    registerResourcesAndPrompts(mcp);
    registerDiagnosticTools(mcp);
    registerSchemaFixtures(mcp);
  });
}

import type { TaskServer } from '../app.js';
import { registerContentTools, registerResourcesAndPrompts } from './conformance-content.js';
import {
  registerDiagnosticTools,
  registerStatelessDiagnostics,
} from './conformance-diagnostics.js';
import { registerMrtrFixtures } from './conformance-mrtr.js';
import { registerSchemaFixtures } from './conformance-schemas.js';
import registerDemo from './demo.js';

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

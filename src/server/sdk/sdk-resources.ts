import type { McpServer } from '@modelcontextprotocol/server';
import {
  passResourcesThrough,
  type Handler,
  type PassedThroughResources,
} from './task-resources.js';

const METHODS = {
  'resources/read': 'read',
  'resources/list': 'list',
  'resources/templates/list': 'templates',
} as const satisfies Record<string, keyof PassedThroughResources>;

type ResourceMethod = keyof typeof METHODS;

function isResourceMethod(method: string): method is ResourceMethod {
  return Object.hasOwn(METHODS, method);
}

/**
 * Keeps the resources a configurer registers with the SDK (`mcp.registerResource`) answering
 * beside taskrail's own: the SDK installs its resource handlers through the public
 * `setRequestHandler`, which `registerTaskResources` replaces afterwards. Call before the
 * configurers run; the returned function, after them, hands what the SDK installed on as the
 * resources passed through (unless a configurer passed its own, as the proxy does).
 */
export function keepSdkResources(mcp: McpServer): () => void {
  const server = mcp.server;
  const setRequestHandler = server.setRequestHandler.bind(server);
  const captured: Partial<PassedThroughResources> = {};
  const capturing = (method: string, handler: Handler): void => {
    if (isResourceMethod(method)) captured[METHODS[method]] = handler;
    (setRequestHandler as (method: string, handler: Handler) => void)(method, handler);
  };
  Object.defineProperty(server, 'setRequestHandler', { value: capturing, configurable: true });
  return () => {
    Reflect.deleteProperty(server, 'setRequestHandler');
    const { read, list, templates } = captured;
    if (read === undefined || list === undefined || templates === undefined) return;
    passResourcesThrough(mcp, { read, list, templates }, { keepExisting: true });
  };
}

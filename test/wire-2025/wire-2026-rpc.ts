import { createHttpDispatch, type RpcReply } from '../../src/client/rpc-http.js';

/** One 2026-07-28 request with the tasks extension declared (what a 2026-07-28 host sends). */
export function wire2026Rpc(url: string, bearer?: string) {
  const dispatch = createHttpDispatch({
    url,
    ...(bearer === undefined ? {} : { bearer }),
    framing: {
      protocolVersion: '2026-07-28',
      clientInfo: { name: 'wire-2026-test', version: '1.0.0' },
      clientCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    },
  });
  return async (
    method: string,
    params: Record<string, unknown>,
  ): Promise<Record<string, unknown>> => {
    const reply: RpcReply = await dispatch({ method, params });
    if (reply.kind === 'error')
      throw Object.assign(new Error(reply.error.message), { code: reply.error.code });
    return reply.result;
  };
}

import { resolve } from 'node:path';
import { startNode, type Child } from '../helpers/child.js';
import { waitFor } from '../helpers/wait.js';
import type { Message } from './stdio-peer.js';

const MAIN = resolve('dist/cli/main.js');

export type WireMessage = Message & {
  jsonrpc?: string;
  method?: string;
  params?: Record<string, unknown>;
  id?: number | string;
};

let nextId = 1;

/** `taskrail serve --stdio` as a real child process, spoken to as a 2026-07-28 stdio host. */
export class StdioChild {
  readonly child: Child;
  #read = 0;
  readonly #messages: WireMessage[] = [];

  constructor(store: string) {
    this.child = startNode(MAIN, ['serve', '--stdio', '--store', store, '--log-level', 'warn']);
  }

  /** Every message the server wrote so far, in order. */
  get messages(): readonly WireMessage[] {
    const lines = this.child.lines;
    for (; this.#read < lines.length; this.#read++) {
      this.#messages.push(JSON.parse(lines[this.#read] as string) as WireMessage);
    }
    return this.#messages;
  }

  write(message: object): void {
    this.child.process.stdin!.write(`${JSON.stringify(message)}\n`);
  }

  /** Sends a request with the 2026-07-28 envelope (`caps` as its client capabilities). */
  send(method: string, params: Record<string, unknown>, caps: object, meta: object = {}): number {
    const id = nextId++;
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'stdio-child-test', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': caps,
      ...meta,
    };
    this.write({ jsonrpc: '2.0', id, method, params: { ...params, _meta } });
    return id;
  }

  /** The first message (from `from` on) that `match` accepts, within the deadline. */
  next(what: string, match: (message: WireMessage) => boolean, from = 0): Promise<WireMessage> {
    return waitFor(what, () => this.messages.slice(from).find(match), { timeoutMs: 15_000 });
  }

  async request(
    method: string,
    params: Record<string, unknown>,
    caps: object,
    meta: object = {},
  ): Promise<WireMessage> {
    const id = this.send(method, params, caps, meta);
    return this.next(
      `the answer to ${method} #${id}`,
      (message) => message.id === id && !message.method,
    );
  }

  close(): Promise<void> {
    return this.child.kill('SIGKILL');
  }
}

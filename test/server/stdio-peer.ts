import { PassThrough } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

export type Message = {
  id?: number;
  result?: Record<string, unknown>;
  error?: { code: number; message?: string; data?: unknown };
};

/** A demo server on in-memory pipes, spoken to as a 2026-07-28 stdio host would. */
export class StdioPeer {
  readonly #stdin = new PassThrough();
  readonly #stdout = new PassThrough();
  readonly #waiting = new Map<number, (message: Message) => void>();
  #buffer = '';
  #nextId = 1;

  constructor() {
    this.#stdout.on('data', (chunk: Buffer) => this.#read(chunk.toString('utf8')));
  }

  get transport(): StdioServerTransport {
    return new StdioServerTransport(this.#stdin, this.#stdout);
  }

  request(method: string, params: Record<string, unknown>, caps: object): Promise<Message> {
    const id = this.#nextId++;
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'stdio-test', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': caps,
    };
    const reply = new Promise<Message>((resolve) => this.#waiting.set(id, resolve));
    this.#stdin.write(
      `${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta } })}\n`,
    );
    return reply;
  }

  #read(text: string): void {
    this.#buffer += text;
    let newline: number;
    while ((newline = this.#buffer.indexOf('\n')) !== -1) {
      const message = JSON.parse(this.#buffer.slice(0, newline)) as Message;
      this.#buffer = this.#buffer.slice(newline + 1);
      if (typeof message.id === 'number') this.#waiting.get(message.id)?.(message);
    }
  }
}

import { PassThrough } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';

/** The host's end of an in-memory stdio pipe pair, in the SDK 1.x client's framing. */
class PipeHostTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #buffer = new ReadBuffer();

  constructor(
    private readonly serverStdout: PassThrough,
    private readonly serverStdin: PassThrough,
  ) {}

  start(): Promise<void> {
    this.serverStdout.on('data', (chunk: Buffer) => {
      this.#buffer.append(chunk);
      for (let message = this.#read(); message !== null; message = this.#read()) {
        this.onmessage?.(message);
      }
    });
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    this.serverStdin.write(serializeMessage(message));
    return Promise.resolve();
  }

  /** Ends the server's stdin, as a host closing its child's pipe does. */
  close(): Promise<void> {
    this.serverStdin.end();
    this.onclose?.();
    return Promise.resolve();
  }

  #read(): JSONRPCMessage | null {
    try {
      return this.#buffer.readMessage();
    } catch (error) {
      this.onerror?.(error as Error);
      return null;
    }
  }
}

/** A stdio connection on in-memory pipes: the server's transport and an SDK 1.x host's. */
export function stdioPair(): { server: StdioServerTransport; host: Transport } {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  return {
    server: new StdioServerTransport(stdin, stdout),
    host: new PipeHostTransport(stdout, stdin),
  };
}

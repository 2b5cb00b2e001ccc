import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CreateTaskResultSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
  type TaskStatusNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '../helpers/wait.js';

const MAIN = resolve('dist/cli/main.js');
export const PATIENT = { timeoutMs: 30_000, intervalMs: 50 };

type Status = TaskStatusNotification['params'];

/** A VS Code-like host: the SDK 1.x client starting `taskrail serve --stdio` itself. */
export class StdioHost {
  readonly client = new Client(
    { name: 'stdio-2025-test', version: '1.0.0' },
    {
      capabilities: {
        elicitation: { form: {} },
        tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } },
      },
    },
  );
  readonly statuses: Status[] = [];
  readonly questions: string[] = [];
  #transport: StdioClientTransport | undefined;

  /** Starts the server process on `store`; `serveArgs` go to `taskrail serve` (e.g. `--tools`). */
  async start(store: string, serveArgs: string[] = []): Promise<this> {
    this.client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      this.statuses.push(notification.params);
    });
    this.client.setRequestHandler(ElicitRequestSchema, (request) => {
      this.questions.push(request.params.message);
      return { action: 'accept', content: { confirm: true } };
    });
    const args = [MAIN, 'serve', '--stdio', '--store', store, '--log-level', 'warn', ...serveArgs];
    this.#transport = new StdioClientTransport({
      command: process.execPath,
      args,
      stderr: 'pipe',
    });
    await this.client.connect(this.#transport);
    return this;
  }

  async createTask(name: string, args: object): Promise<string> {
    const created = await this.client.request(
      { method: 'tools/call', params: { name, arguments: args, task: { ttl: 600_000 } } },
      CreateTaskResultSchema,
    );
    return created.task.taskId;
  }

  /** Polls tasks/get until the task reaches `status`. */
  async until(taskId: string, status: string, patience = PATIENT): Promise<void> {
    await waitFor(
      `task ${taskId} to be ${status}`,
      async () => (await this.client.experimental.tasks.getTask(taskId)).status === status,
      patience,
    );
  }

  async listedIds(): Promise<string[]> {
    const listed = await this.client.experimental.tasks.listTasks();
    return listed.tasks.map((task) => task.taskId);
  }

  /** Kills the server process with SIGKILL (no shutdown runs) and waits until it is gone. */
  async kill(): Promise<void> {
    let closed = false;
    this.client.onclose = () => (closed = true);
    const pid = this.#transport?.pid;
    if (typeof pid !== 'number') throw new Error('the server process is not running');
    process.kill(pid, 'SIGKILL');
    await waitFor('the killed server process to exit', () => closed, PATIENT);
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { JsonLineReader } from './json-lines.js';

/** How long the upstream gets after its input closed, then after SIGTERM, before SIGKILL. */
export const STOP_GRACE_MS = 2000;
const GONE_CHECK_MS = 50;

/** Process groups of upstreams started by this process and not yet stopped. */
const running = new Set<number>();
let exitHookInstalled = false;

/**
 * A stdio MCP server started in its own process group, so that stopping it stops everything
 * it started: `npx -y server` runs the server as npx's child, and a SIGTERM to npx alone left
 * that server running with parent 1. Stopping follows the MCP stdio shutdown (close its
 * input, wait, SIGTERM, wait, SIGKILL), each signal sent to the whole group.
 */
export class UpstreamProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** The upstream's standard error, readable before `start` so no early line is lost. */
  readonly stderr = new PassThrough();
  readonly #command: string;
  readonly #args: string[];
  readonly #env: Record<string, string>;
  readonly #lines = new JsonLineReader();
  #child: ChildProcess | undefined;
  #stopping: Promise<void> | undefined;

  constructor(command: string, args: string[], env: Record<string, string>) {
    this.#command = command;
    this.#args = args;
    this.#env = env;
  }

  /** The process group id (the first process's pid), once started. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  start(): Promise<void> {
    if (this.#child !== undefined) throw new Error('the upstream process was already started');
    const child = spawn(this.#command, this.#args, {
      env: this.#env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true,
    });
    this.#child = child;
    child.stderr.pipe(this.stderr);
    child.stdout.on('data', (chunk: Buffer) => this.#read(chunk));
    child.stdout.on('error', (error) => this.onerror?.(error));
    child.stdin.on('error', (error) => this.onerror?.(error));
    child.once('close', () => {
      // Its first process ended: anything it left behind in the group is stopped too.
      void this.#stopGroup(child);
      this.onclose?.();
    });
    return new Promise((resolve, reject) => {
      child.once('spawn', () => {
        if (child.pid !== undefined && process.platform !== 'win32') track(child.pid);
        resolve();
      });
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (stdin === undefined || stdin === null || !stdin.writable) {
      return Promise.reject(new Error('the upstream process is not running'));
    }
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Closes its input, then signals its whole group until nothing of it is left. */
  async close(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    await this.#stopGroup(child);
    this.#lines.clear();
  }

  #stopGroup(child: ChildProcess): Promise<void> {
    this.#stopping ??= stopGroup(child);
    return this.#stopping;
  }

  #read(chunk: Buffer): void {
    this.#lines.push(
      chunk,
      (message) => this.onmessage?.(message),
      (error) => this.onerror?.(error),
    );
  }
}

async function stopGroup(child: ChildProcess): Promise<void> {
  const group = child.pid;
  if (group === undefined) return;
  if (process.platform === 'win32') {
    if (child.exitCode === null) child.kill();
    return;
  }
  for (const signal of [undefined, 'SIGTERM', 'SIGKILL'] as const) {
    if (signal !== undefined) signalGroup(group, signal);
    if (await groupGone(group, STOP_GRACE_MS)) break;
  }
  running.delete(group);
}

function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch {
    // ESRCH: nothing left in the group
  }
}

/** Whether any process of the group is alive (a zombie, already dead, does not count). */
function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
  } catch {
    return false;
  }
  return !onlyZombies(group);
}

async function groupGone(group: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (groupAlive(group)) {
    if (Date.now() >= deadline) return false;
    await sleep(GONE_CHECK_MS);
  }
  return true;
}

function track(group: number): void {
  running.add(group);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A proxy that exits without closing its upstreams (a crash, process.exit): the groups get
  // SIGTERM now and, from a detached shell that outlives us, SIGKILL after the grace.
  process.once('exit', () => {
    for (const group of running) {
      signalGroup(group, 'SIGTERM');
      killLater(group);
    }
  });
}

function killLater(group: number): void {
  try {
    spawn('/bin/sh', ['-c', `sleep ${STOP_GRACE_MS / 1000}; kill -KILL -- -${group} 2>/dev/null`], {
      detached: true,
      stdio: 'ignore',
    }).unref();
  } catch {
    // no shell: SIGTERM was all we could send
  }
}

/** Linux: whether every process left in the group is a zombie (dead, waiting to be reaped). */
function onlyZombies(group: number): boolean {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return false; // no procfs: trust kill(0)
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === group && state !== 'Z') return false;
  }
  return true;
}

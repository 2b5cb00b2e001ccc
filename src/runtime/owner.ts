import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { newToken } from '../task/ids.js';

/**
 * Who holds a lease: `host:pid:nonce@machine`. `machine` names the kernel boot and the pid
 * namespace, so another process that shares both can tell whether the holder still exists;
 * without it (not Linux) nobody ever presumes the holder dead and its lease runs out instead.
 */
const OWNER = /^[^:]*:(\d+):[^@]*@([0-9a-f]{16})$/;

let machine: string | null | undefined;

/** The kernel boot and pid namespace of this process, hashed; null when they cannot be read. */
function machineKey(): string | null {
  if (machine !== undefined) return machine;
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const pidNamespace = readlinkSync('/proc/self/ns/pid');
    machine = createHash('sha256').update(`${boot} ${pidNamespace}`).digest('hex').slice(0, 16);
  } catch {
    machine = null;
  }
  return machine;
}

export function newOwnerId(): string {
  const base = `${hostname()}:${process.pid}:${newToken().slice(0, 8)}`;
  const key = machineKey();
  return key === null ? base : `${base}@${key}`;
}

/**
 * True only when `owner` was a process that shares this process's kernel boot and pid
 * namespace and no longer exists. Any doubt (another machine, a reused pid, no permission to
 * ask) answers false, and the lease is left to expire.
 */
export function isGoneLocalOwner(owner: string): boolean {
  const match = OWNER.exec(owner);
  const key = machineKey();
  if (match === null || key === null || match[2] !== key) return false;
  const pid = Number(match[1]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

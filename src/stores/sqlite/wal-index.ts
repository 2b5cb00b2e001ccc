import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';

/**
 * The two copies of the wal-index header at the start of the `-shm` file (SQLite's file
 * format, "WAL-Index Format": 2 × 48 bytes). Every commit to a WAL database rewrites them
 * (the frame count, change counter and checksum) before the commit returns, in shared memory
 * that every connection maps; nothing else but crash recovery writes them.
 */
const HEADER_BYTES = 96;
/** `iVersion`, the header's first field, in the byte order of the machine that wrote it. */
const WAL_INDEX_VERSION = 3007000;

/**
 * A witness that no connection has committed: the wal-index header read with one `pread`
 * (about a microsecond) is byte for byte the one seen at the last precise check. It only
 * ever says "unchanged" when no commit happened since that read, so a caller that reads it
 * before its precise check (`PRAGMA data_version`, which opens a read transaction: two
 * file-lock calls and a statement, ~5 µs) may skip that check while it holds. Our own commits
 * change the header too: the next check is then a precise one.
 */
export class WalIndexWitness {
  readonly #file: SharedShmFile;
  readonly #fd: number;
  readonly #seen = Buffer.alloc(HEADER_BYTES);
  readonly #read = Buffer.alloc(HEADER_BYTES);
  #remembered = false;
  #closed = false;

  private constructor(file: SharedShmFile) {
    this.#file = file;
    this.#fd = file.fd;
  }

  /**
   * The witness of the WAL database at `dbPath` (open it first, in WAL mode), or undefined
   * when its `-shm` file is missing or does not hold a wal-index (another VFS, a memory
   * wal-index): the caller then checks precisely every time.
   */
  static open(dbPath: string): WalIndexWitness | undefined {
    const file = SharedShmFile.acquire(`${dbPath}-shm`);
    if (file === undefined) return undefined;
    const witness = new WalIndexWitness(file);
    if (witness.#readHeader() && witness.#looksLikeWalIndex()) return witness;
    // Not released: SQLite may hold locks on this file in this process (see SharedShmFile).
    return undefined;
  }

  /** Reads the header now; true when it equals the one `remember` kept. */
  unchanged(): boolean {
    return this.#readHeader() && this.#remembered && this.#read.equals(this.#seen);
  }

  /** Keeps the header `unchanged` read last, once the precise check after it has run. */
  remember(): void {
    this.#read.copy(this.#seen);
    this.#remembered = true;
  }

  /** Call only once the store's connections to the file are closed (see SharedShmFile). */
  close(): void {
    this.#remembered = false;
    if (this.#closed) return;
    this.#closed = true;
    this.#file.release();
  }

  #readHeader(): boolean {
    try {
      return readSync(this.#fd, this.#read, 0, HEADER_BYTES, 0) === HEADER_BYTES;
    } catch {
      this.#remembered = false;
      return false;
    }
  }

  #looksLikeWalIndex(): boolean {
    const version = endianness() === 'LE' ? this.#read.readUInt32LE(0) : this.#read.readUInt32BE(0);
    return version === WAL_INDEX_VERSION;
  }
}

/**
 * One read-only descriptor of a `-shm` file per process, shared by every witness of it.
 * SQLite keeps its WAL locks (the write lock, the readers' marks, the "dead man switch" that
 * tells a newcomer the wal-index is live) as POSIX advisory locks on this file, and POSIX
 * drops every lock a process holds on a file when the process closes any descriptor of it
 * (https://sqlite.org/howtocorrupt.html#_posix_advisory_locks_canceled_by_a_separate_thread_doing_close_).
 * A witness that closed its own descriptor while another connection of the process (the
 * checkpoint thread mid-checkpoint, a second store on the file) held a lock let another
 * process write the WAL at the same time: commits were lost. So the descriptor is closed only
 * when the last witness of the file lets go, which the store does after closing its
 * connections and stopping its checkpoint thread.
 */
class SharedShmFile {
  static readonly #open = new Map<string, SharedShmFile>();
  readonly fd: number;
  readonly #path: string;
  #holders = 1;

  private constructor(path: string, fd: number) {
    this.#path = path;
    this.fd = fd;
  }

  static acquire(path: string): SharedShmFile | undefined {
    const shared = SharedShmFile.#open.get(path);
    if (shared !== undefined) {
      shared.#holders += 1;
      return shared;
    }
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      return undefined;
    }
    const file = new SharedShmFile(path, fd);
    SharedShmFile.#open.set(path, file);
    return file;
  }

  release(): void {
    this.#holders -= 1;
    if (this.#holders > 0) return;
    SharedShmFile.#open.delete(this.#path);
    closeSync(this.fd);
  }
}

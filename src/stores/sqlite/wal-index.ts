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
  readonly #fd: number;
  readonly #seen = Buffer.alloc(HEADER_BYTES);
  readonly #read = Buffer.alloc(HEADER_BYTES);
  #remembered = false;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  /**
   * The witness of the WAL database at `dbPath` (open it first, in WAL mode), or undefined
   * when its `-shm` file is missing or does not hold a wal-index (another VFS, a memory
   * wal-index): the caller then checks precisely every time.
   */
  static open(dbPath: string): WalIndexWitness | undefined {
    let fd: number;
    try {
      fd = openSync(`${dbPath}-shm`, 'r');
    } catch {
      return undefined;
    }
    const witness = new WalIndexWitness(fd);
    if (witness.#readHeader() && witness.#looksLikeWalIndex()) return witness;
    closeSync(fd);
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

  close(): void {
    this.#remembered = false;
    closeSync(this.#fd);
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

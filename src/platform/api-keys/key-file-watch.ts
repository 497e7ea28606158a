import { stat } from 'node:fs/promises';
import type { FastifyBaseLogger } from 'fastify';
import { readKeyFile, type FileState, type KeyFile } from './key-file.js';
import { ApiKeySet } from './key-set.js';

/**
 * The keys a running service accepts, kept in step with `API_KEYS_FILE` without a restart:
 *
 * - the file's state (size, modification and change times, inode) is looked at every
 *   KEY_FILE_CHECK_MS; when it changed, the file is read again and checked, and the new set replaces
 *   the old one at once (for the next request). SIGHUP reads it again whatever its state. A change
 *   thus reaches every replica that reads the file within KEY_FILE_CHECK_MS and the time of a read
 *   (tested: under 2 s). Looking at the state rather than waiting for file events works the same on
 *   a bind mount, a network file system and a Kubernetes ConfigMap (a link swapped to a new directory:
 *   the state read through the link changes), where inotify events are missed or never sent.
 * - a file that cannot be read or checked keeps the last good set, and logs one error saying why
 *   (never a key), once per version of the file (and at each SIGHUP that finds it so).
 * - at start the file has been read by the settings (settings.ts): an unusable one stopped the start.
 */
export const KEY_FILE_CHECK_MS = 250;

const sameState = (a: FileState | null, b: FileState | null): boolean =>
  a !== null && b !== null && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino;

export interface KeyFileSource {
  path: string;
  /** The file as read at start, and its state before that read. */
  initial: KeyFile & { state: FileState };
}

export class LiveApiKeys {
  private keys: ApiKeySet;
  private timer: NodeJS.Timeout | undefined;
  /** The state of the file when it was last read, well or not: it is read again when its state differs. */
  private readState: FileState | null;
  /** Why the file's present version cannot be used, once logged; null while it can. */
  private failure: string | null = null;
  private reading: Promise<void> | null = null;
  private readonly onHangUp = () => void this.reload('SIGHUP');

  constructor(
    private readonly service: string,
    private readonly anonymousKeys: readonly string[],
    private readonly file: KeyFileSource | null,
    private readonly log: FastifyBaseLogger,
  ) {
    this.keys = new ApiKeySet(service, anonymousKeys, file?.initial.records ?? null);
    this.readState = file?.initial.state ?? null;
  }

  /** The keys accepted now. */
  get current(): ApiKeySet {
    return this.keys;
  }

  /** Starts watching the file, and reading it on SIGHUP (nothing without a file); `stop` ends both. */
  start(): void {
    if (this.file === null || this.timer !== undefined) return;
    this.timer = setInterval(() => void this.check(), KEY_FILE_CHECK_MS);
    this.timer.unref();
    process.on('SIGHUP', this.onHangUp);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    process.off('SIGHUP', this.onHangUp);
  }

  /** Reads the file when its state changed since it was last read. */
  async check(): Promise<void> {
    if (this.file === null || this.reading !== null) return;
    const state = await stat(this.file.path).catch(() => null);
    // A file still missing or unreadable, already logged: nothing new to read.
    if (sameState(state, this.readState) || (state === null && this.readState === null && this.failure !== null)) return;
    await this.reload('changed');
  }

  /** Reads the file again now: a good file replaces the keys, an unusable one keeps them and is logged. */
  async reload(cause: 'changed' | 'SIGHUP'): Promise<void> {
    if (this.file === null) return;
    this.reading ??= this.read(this.file.path, cause).finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async read(path: string, cause: 'changed' | 'SIGHUP'): Promise<void> {
    // The state is taken before the read: a write that lands during the read changes it again.
    const state = await stat(path).catch(() => null);
    this.readState = state;
    try {
      const read = await readKeyFile(path);
      this.keys = new ApiKeySet(this.service, this.anonymousKeys, read.records);
      this.failure = null;
      this.log.info({ api_keys_file: path, keys: read.records.length, cause }, 'API keys read again from API_KEYS_FILE');
    } catch (error) {
      const reason = (error as Error).message;
      if (reason !== this.failure || cause === 'SIGHUP') {
        this.log.error({ api_keys_file: path, reason, cause }, 'API_KEYS_FILE cannot be used: the last good keys stay in force');
      }
      this.failure = reason;
    }
  }
}

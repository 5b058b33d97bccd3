import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { appendFile, mkdir, open, readdir, readFile, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError, ExitCode, UsageError } from '../exit-codes.js';
import { writeFileAtomic } from '../io/atomic-file.js';
import { processIsAlive } from '../process-alive.js';
import type { TextSink } from '../io/sink.js';

/**
 * A pipeline's --state directory:
 *   lock                 the running process (pid, host, start), so two runs never share the state
 *   current/checkpoint.json  an unfinished run: its command's fingerprint, the next company cursor,
 *                        and how many bytes of current/output and current/keys are committed
 *   current/output       the rows written so far, in the final format
 *   current/keys         the lead keys written so far (for --only-new)
 *   exported/<run>.keys  the lead keys each successful run exported
 *   runs.ndjson          one line per successful run
 *   verify-*.ndjson      verification results paid for (never paid twice, even across a crash)
 */
export interface Checkpoint {
  version: 1;
  run_id: string;
  fingerprint: string;
  command: string;
  /** The run's clock, kept so a resumed run classifies freshness exactly as the first part did. */
  now: string;
  /** Cursor of the next company page to fetch; null before the first page. */
  cursor: string | null;
  /** The last company page is committed: a resume only has to finish the output. */
  listing_done: boolean;
  /** The provenance of the listing, so a resumed JSON document ends exactly as an uninterrupted one. */
  meta: { source?: unknown; scope?: unknown } | null;
  output_bytes: number;
  keys_bytes: number;
  rows_written: number;
  pages_done: number;
  counters: Record<string, unknown>;
}

export class LockedError extends CliError {
  constructor(message: string, hint: string) {
    super(message, ExitCode.locked, hint);
    this.name = 'LockedError';
  }
}

export class PipelineState {
  private constructor(readonly dir: string) {}

  static async open(dir: string): Promise<PipelineState> {
    try {
      await mkdir(join(dir, 'current'), { recursive: true, mode: 0o700 });
      await mkdir(join(dir, 'exported'), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new UsageError(`cannot use --state ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
    }
    return new PipelineState(dir);
  }

  private path(...parts: string[]): string {
    return join(this.dir, ...parts);
  }

  /** Takes the lock, or says who holds it. A lock left by a dead process is taken over. */
  async lock(command: string): Promise<() => Promise<void>> {
    const lockPath = this.path('lock');
    const mine = JSON.stringify({ pid: process.pid, host: hostname(), started_at: new Date().toISOString(), command });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      try {
        await appendFile(lockPath, mine, { flag: 'wx', mode: 0o600 });
        return async () => {
          await rm(lockPath, { force: true });
        };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = await readLock(lockPath);
      if (holder && holderIsAlive(holder)) {
        throw new LockedError(
          `another pipeline run (pid ${holder.pid}, started ${holder.started_at}) is using --state ${this.dir}.`,
          'Wait for it to finish, or stop it; prospect exits rather than run twice on one state.',
        );
      }
      await rm(lockPath, { force: true });
    }
    throw new LockedError(`could not take the lock of --state ${this.dir}.`, 'Another run may have taken it at the same moment; try again.');
  }

  async readCheckpoint(): Promise<Checkpoint | undefined> {
    const text = await readFile(this.path('current', 'checkpoint.json'), 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as Checkpoint;
    } catch {
      throw new UsageError(`the checkpoint in ${this.dir}/current is damaged.`, `Remove ${this.dir}/current to start over.`);
    }
  }

  /** The cursor is committed only after the data it covers is on disk (fsync), never before. */
  async commit(checkpoint: Checkpoint, files: Array<AppendOnlyFile | undefined>): Promise<void> {
    for (const file of files) await file?.sync();
    await writeFileAtomic(this.path('current', 'checkpoint.json'), JSON.stringify(checkpoint), 0o600);
  }

  openOutput(committedBytes: number): Promise<AppendOnlyFile> {
    return AppendOnlyFile.open(this.path('current', 'output'), committedBytes);
  }

  openKeys(committedBytes: number): Promise<AppendOnlyFile> {
    return AppendOnlyFile.open(this.path('current', 'keys'), committedBytes);
  }

  get outputPath(): string {
    return this.path('current', 'output');
  }

  /** Every lead key an earlier successful run exported. */
  async exportedKeys(): Promise<Set<string>> {
    const keys = new Set<string>();
    for (const name of await readdir(this.path('exported'))) {
      if (!name.endsWith('.keys')) continue;
      for (const key of (await readFile(this.path('exported', name), 'utf8')).split('\n')) if (key) keys.add(key);
    }
    return keys;
  }

  /** After the output is in place: remember what this run exported, then forget the checkpoint. */
  async recordSuccess(checkpoint: Checkpoint, record: Record<string, unknown>): Promise<void> {
    const keys = await readFile(this.path('current', 'keys'), 'utf8').catch(() => '');
    await writeFileAtomic(this.path('exported', `${checkpoint.run_id}.keys`), keys, 0o600);
    await appendFile(this.path('runs.ndjson'), `${JSON.stringify({ run_id: checkpoint.run_id, ...record })}\n`, { mode: 0o600 });
    await rm(this.path('current'), { recursive: true, force: true });
    await mkdir(this.path('current'), { recursive: true, mode: 0o700 });
  }

  /** Forgets an unfinished run whose output was discarded (e.g. a 422: nothing to resume). */
  async discardCurrent(): Promise<void> {
    await rm(this.path('current'), { recursive: true, force: true });
    await mkdir(this.path('current'), { recursive: true, mode: 0o700 });
  }
}

export function newRunId(): string {
  return `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${randomBytes(3).toString('hex')}`;
}

export function fingerprint(parameters: unknown): string {
  return createHash('sha256').update(JSON.stringify(parameters)).digest('hex').slice(0, 16);
}

/** A file written in order whose committed length is known; a resumed run cuts it back to that length. */
export class AppendOnlyFile implements TextSink {
  private constructor(
    private readonly handle: FileHandle,
    private position: number,
  ) {}

  static async open(path: string, committedBytes: number): Promise<AppendOnlyFile> {
    const handle = await open(path, committedBytes > 0 ? 'r+' : 'w', 0o600);
    await handle.truncate(committedBytes);
    return new AppendOnlyFile(handle, committedBytes);
  }

  get bytes(): number {
    return this.position;
  }

  async write(text: string): Promise<void> {
    const buffer = Buffer.from(text, 'utf8');
    let offset = 0;
    while (offset < buffer.length) {
      const { bytesWritten } = await this.handle.write(buffer, offset, buffer.length - offset, this.position);
      offset += bytesWritten;
      this.position += bytesWritten;
    }
  }

  sync(): Promise<void> {
    return this.handle.sync();
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

interface LockHolder {
  pid: number;
  host: string;
  started_at: string;
}

async function readLock(path: string): Promise<LockHolder | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as LockHolder;
  } catch {
    // A lock being written right now reads as empty: treat it as held, by a live process.
    return { pid: process.pid === 1 ? 2 : 1, host: hostname(), started_at: 'just now' };
  }
}

/** A lock from another host cannot be checked, so it counts as held. */
function holderIsAlive(holder: LockHolder): boolean {
  return holder.host !== hostname() || processIsAlive(holder.pid);
}

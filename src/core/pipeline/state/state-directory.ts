import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RemoteJobState } from '../../state-store/types.js';
import { makeDirectoryDurable, syncDirectory } from '../../../io/atomic-file.js';
import { assertOwnDirectory } from '../../../io/own-directory.js';
import { UsageError } from '../../../exit-codes.js';
import { AppendOnlyFile } from '../../../io/append-only-file.js';
import { takeStateLock } from '../../state-store/lock.js';

/**
 * A pipeline's --state directory:
 *   lock                     the running process (pid, host, start), so two runs never share the
 *                            state (lock.ts)
 *   current/checkpoint.json  an unfinished run: its command's fingerprint, the next company cursor,
 *                            and how many bytes of current/output (or current/rows) and current/keys
 *                            are committed (checkpoint.ts)
 *   current/output           the rows written so far, in the final format
 *   current/rows             a paying run that plans first (spend-plan.ts): its rows, unverified, one JSON object
 *                            a line; current/output is then written from them once every address is known
 *   current/keys             the lead keys written so far (for --only-new)
 *   current/publishing.json  the run's record, written just before its output is moved into place (exports-ledger.ts)
 *   exported.sqlite          the exports ledger: the lead keys every successful run exported, and those
 *                            runs (exports-ledger.ts)
 *   runs.ndjson              one line per successful run (exports-ledger.ts)
 *   verify-*.ndjson          verification results paid for (never paid twice, even across a crash)
 */
export class StateDirectory {
  /** `remote`: a job kept in the team store (pg:NAME); this private directory mirrors it while the run works. */
  private constructor(
    readonly dir: string,
    readonly remote?: RemoteJobState,
  ) {}

  /** A job kept in the team store: its unfinished run is written into a private temporary directory once locked. */
  static async mirror(remote: RemoteJobState): Promise<StateDirectory> {
    const dir = await mkdtemp(join(tmpdir(), 'prospect-job-'));
    await mkdir(join(dir, 'current'), { mode: 0o700 });
    return new StateDirectory(dir, remote);
  }

  /** How messages name the state: the directory, or pg:NAME. */
  get label(): string {
    return this.remote?.label ?? this.dir;
  }

  /** A directory another user could write is refused (exit 2): they could swap its ledgers and read what was paid. */
  static async open(dir: string): Promise<StateDirectory> {
    try {
      makeDirectoryDurable(join(dir, 'current'), 0o700);
    } catch (error) {
      throw new UsageError(
        `cannot use --state ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`,
      );
    }
    assertOwnDirectory(dir, `--state ${dir}`);
    assertOwnDirectory(join(dir, 'current'), `--state ${dir}`);
    return new StateDirectory(dir);
  }

  /** An existing directory, to read (`prospect state`): nothing is created in it. */
  static forReading(dir: string): StateDirectory {
    assertOwnDirectory(dir, `--state ${dir}`);
    return new StateDirectory(dir);
  }

  get currentDir(): string {
    return join(this.dir, 'current');
  }

  get checkpointPath(): string {
    return join(this.dir, 'current', 'checkpoint.json');
  }

  get outputPath(): string {
    return join(this.dir, 'current', 'output');
  }

  get rowsPath(): string {
    return join(this.dir, 'current', 'rows');
  }

  get keysPath(): string {
    return join(this.dir, 'current', 'keys');
  }

  get publishingPath(): string {
    return join(this.dir, 'current', 'publishing.json');
  }

  get exportsLedgerPath(): string {
    return join(this.dir, 'exported.sqlite');
  }

  get runsPath(): string {
    return join(this.dir, 'runs.ndjson');
  }

  /** Takes the lock, or says who holds it; resolves to its release. */
  lock(command: string): Promise<() => Promise<void>> {
    if (this.remote) return this.remote.lock(command, this);
    return takeStateLock(join(this.dir, 'lock'), this.dir, command);
  }

  /**
   * The rows so far: renamed over -o when the run is done, so created as any output is (0666 less
   * the umask; the directory is private meanwhile).
   */
  openOutput(committedBytes: number): Promise<AppendOnlyFile> {
    return AppendOnlyFile.open(this.outputPath, committedBytes, 0o666);
  }

  openRows(committedBytes: number): Promise<AppendOnlyFile> {
    return AppendOnlyFile.open(this.rowsPath, committedBytes);
  }

  openKeys(committedBytes: number): Promise<AppendOnlyFile> {
    return AppendOnlyFile.open(this.keysPath, committedBytes);
  }

  /**
   * Forgets the unfinished run: after a success, or when its output was discarded (e.g. a 422: nothing
   * to resume). current/ goes with it (docs/state-directory.md); the next run's open() makes it again.
   */
  async discardCurrent(): Promise<void> {
    await rm(this.currentDir, { recursive: true, force: true });
    syncDirectory(this.dir);
    await this.remote?.discard();
  }
}

/**
 * The diff of a --state directory on a thread of its own (diff-worker.ts): each row's JSON, its
 * digest and the SQLite calls run there while this thread reads and checks the next page
 * (BENCHMARKS.md section 16). A call is one message, answered in order; a page's rows go as they
 * are (the technology entries they share go once).
 */
import { Worker } from 'node:worker_threads';
import { CliError, type ExitCodeValue } from '../../exit-codes.js';
import type { SnapshotInfo } from '../state-store/types.js';
import { goneRow, type ChangeCounts, type ChangeRow, type GoneCompany, type ListingDiff } from './diff.js';
import type { CompanyRow } from '../../api/index.js';

/** What the thread opens: the state directory's series of the filters, for a walk taken at `takenAt`. */
export interface DiffThreadSetup {
  stateDir: string;
  seriesKey: string;
  takenAt: string;
  resumeId: string | undefined;
  observe: boolean;
}

/** A call's answer: its value, or the error it threw, said as facts (an Error's class does not cross). */
export type DiffReply = { id: number; value: unknown } | { id: number; error: ThreadError };

export interface ThreadError {
  name: string;
  message: string;
  stack?: string | undefined;
  exitCode?: ExitCodeValue | undefined;
  hint?: string | undefined;
}

/**
 * The thread's young generation: its garbage comes a page at a time, and with V8's default the two
 * heaps took a 500,000-company --changes run from 230 MB of peak RSS to 254 (BENCHMARKS.md section 16).
 */
const YOUNG_MB = 12;

interface Waiting {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

export class ThreadedDiff implements ListingDiff {
  readonly counts: ChangeCounts = { new: 0, changed: 0, gone: 0, unchanged: 0 };
  listed = 0;
  previous: SnapshotInfo | undefined;
  resumed = false;
  private calls = 0;
  private readonly waiting = new Map<number, Waiting>();
  /** The thread ended or failed: every call after it is refused with this. */
  private failure: Error | undefined;

  private constructor(private readonly worker: Worker) {
    worker.unref();
    worker.on('message', (reply: DiffReply) => this.answer(reply));
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`the snapshot thread ended (exit code ${code})`)));
  }

  /** The thread of `script`, with the series open: a store that cannot open fails here, as it would in this thread. */
  static async open(script: URL, setup: DiffThreadSetup): Promise<ThreadedDiff> {
    const diff = new ThreadedDiff(new Worker(script, { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB } }));
    try {
      const opened = (await diff.call('open', setup)) as { previous: SnapshotInfo | undefined; resumed: boolean };
      diff.previous = opened.previous;
      diff.resumed = opened.resumed;
      return diff;
    } catch (error) {
      await diff.worker.terminate();
      throw error;
    }
  }

  async page(rows: readonly CompanyRow[], written?: ReadonlySet<ChangeRow['change']>): Promise<ChangeRow[]> {
    // A set crosses as a set (structured clone).
    const answer = (await this.call('page', { rows, written })) as Progress & {
      rows: ChangeRow[];
    };
    this.follow(answer);
    return answer.rows;
  }

  async *gone(): AsyncGenerator<ChangeRow[]> {
    for (;;) {
      const answer = (await this.call('gone', undefined)) as Progress & { rows: GoneCompany[] | null };
      this.follow(answer);
      if (answer.rows === null) return;
      yield answer.rows.map((company) => goneRow(company, this.previous!.takenAt));
    }
  }

  async publish(source: string | undefined): Promise<boolean> {
    return (await this.call('publish', source)) as boolean;
  }

  async abandon(): Promise<void> {
    if (this.failure) return;
    await this.call('abandon', undefined);
  }

  /** Closes the store and ends the thread, after the calls before it. */
  async close(): Promise<void> {
    if (this.failure) return;
    await this.call('close', undefined).catch(() => {});
    await this.worker.terminate();
  }

  private call(op: string, args: unknown): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    const id = ++this.calls;
    // Held open only while a call waits, so a run that forgets close() still ends.
    this.worker.ref();
    const answered = new Promise<unknown>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.worker.postMessage({ id, op, args });
    return answered;
  }

  private answer(reply: DiffReply): void {
    const waiting = this.waiting.get(reply.id);
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) this.worker.unref();
    if ('error' in reply) waiting?.reject(errorOf(reply.error));
    else waiting?.resolve(reply.value);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const waiting of this.waiting.values()) waiting.reject(this.failure);
    this.waiting.clear();
  }

  private follow({ counts, listed }: Progress): void {
    Object.assign(this.counts, counts);
    this.listed = listed;
  }
}

/** The diff's counts after a call, which the thread keeps. */
interface Progress {
  counts: ChangeCounts;
  listed: number;
}

/** The thread's error as this thread would have thrown it: a CliError keeps its exit code and hint. */
function errorOf(error: ThreadError): Error {
  const rebuilt =
    error.exitCode === undefined ? new Error(error.message) : new CliError(error.message, error.exitCode, error.hint);
  rebuilt.name = error.name;
  if (error.stack !== undefined) rebuilt.stack = error.stack;
  return rebuilt;
}

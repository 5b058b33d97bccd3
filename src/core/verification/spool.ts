/**
 * The local spool of paid answers a store could not keep (issue 43). Once the team database fails (a
 * full disk, a lost session), the answers to the calls already in flight are appended here, each on
 * disk (fdatasync, 0600) before the run goes on, and the next run reads them into its store before it
 * pays for anything: none is paid twice. One file per service and key, in the user's cache directory.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { makeDirectoryDurable, syncDirectory } from '../../io/atomic-file.js';
import { SyncedLines } from '../../io/synced-lines.js';
import type { VerificationLedger, VerificationResult } from '../state-store/types.js';

export interface SpooledAnswer extends VerificationResult {
  /** The address key, as the ledgers take it. */
  key: string;
}

export class AnswerSpool {
  private readonly lines: SyncedLines;

  constructor(readonly path: string) {
    this.lines = new SyncedLines(path);
  }

  /** The spool of the ledger file `ledgerFileName` (one per service and key), in `directory`. */
  static beside(directory: string, ledgerFileName: string): AnswerSpool {
    return new AnswerSpool(join(directory, `unstored-${ledgerFileName}`));
  }

  /** One answer, on disk before this returns (its directory made, the user's alone, the first time). */
  append(key: string, result: VerificationResult): void {
    makeDirectoryDurable(dirname(this.path), 0o700);
    this.lines.append(JSON.stringify({ key, ...result }));
  }

  /** The answers spooled so far, and the file's size they were read at; a torn last line is left out. */
  read(): { answers: SpooledAnswer[]; size: number } {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { answers: [], size: 0 };
      throw error;
    }
    const answers: SpooledAnswer[] = [];
    for (const line of text.split('\n').slice(0, -1)) {
      const parsed = parseAnswer(line);
      if (parsed) answers.push(parsed);
    }
    return { answers, size: Buffer.byteLength(text) };
  }

  /**
   * Puts the spooled answers `which` selects into `ledger`: before the run pays for anything, so an
   * address answered before the store failed is found, not paid again. The store's failure is thrown.
   */
  async drainInto(ledger: VerificationLedger, which: (answer: SpooledAnswer) => boolean = () => true): Promise<number> {
    let count = 0;
    for (const { key, ...result } of this.read().answers.filter(which)) {
      await ledger.put(key, result);
      count += 1;
    }
    return count;
  }

  /** Removes the spool once its answers are in a store that keeps them (not if another run appended since `size`). */
  removeIfUnchanged(size: number): void {
    this.lines.close();
    if ((statSync(this.path, { throwIfNoEntry: false })?.size ?? -1) !== size) return;
    rmSync(this.path, { force: true });
    syncDirectory(dirname(this.path));
  }

  close(): void {
    this.lines.close();
  }
}

function parseAnswer(line: string): SpooledAnswer | undefined {
  try {
    const value = JSON.parse(line) as Partial<SpooledAnswer>;
    if (typeof value.key !== 'string' || typeof value.status !== 'string' || typeof value.verified_at !== 'string')
      return undefined;
    return {
      key: value.key,
      email: typeof value.email === 'string' ? value.email : '',
      status: value.status,
      verified_at: value.verified_at,
      run: typeof value.run === 'string' ? value.run : undefined,
    };
  } catch {
    return undefined;
  }
}

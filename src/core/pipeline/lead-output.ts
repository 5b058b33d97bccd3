import { createReadStream } from 'node:fs';
import { copyFile, rename, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pipeline as pipeStreams } from 'node:stream/promises';
import { tempPathFor } from '../../io/atomic-file.js';
import type { Column } from '../../io/columns.js';
import { openOutput, type Output } from '../../io/output.js';
import { createRowWriter, type OutputFormat, type RowWriter } from '../../io/writers.js';
import type { RunContext } from '../../runtime/context.js';
import { leadJson, type LeadRow } from './lead-rows.js';
import { leadKey } from './lead-key.js';
import type { AppendOnlyFile } from './append-only-file.js';
import { commitCheckpoint, type Checkpoint } from './checkpoint.js';
import type { StateDirectory } from './state-directory.js';

export interface LeadOutputOptions {
  format: OutputFormat;
  columns: ReadonlyArray<Column<LeadRow>>;
  escapeFormulas: boolean;
  /** -o FILE; stdout without it. */
  output: string | undefined;
}

/**
 * Where a pipeline's leads go. With --state they are appended to current/output (and their keys to
 * current/keys), whose committed lengths the checkpoint keeps, and become visible only when the run
 * is done; without it they stream to the output as any export does.
 */
export class LeadOutput {
  private constructor(
    private readonly ctx: RunContext,
    private readonly options: LeadOutputOptions,
    readonly writer: RowWriter<LeadRow>,
    private readonly stateFiles: { state: StateDirectory; output: AppendOnlyFile; keys: AppendOnlyFile } | undefined,
    private readonly plainOutput: Output | undefined,
  ) {}

  static async open(ctx: RunContext, options: LeadOutputOptions, state: StateDirectory | undefined, checkpoint: Checkpoint, resumed: boolean): Promise<LeadOutput> {
    const stateFiles = state ? { state, output: await state.openOutput(checkpoint.output_bytes), keys: await state.openKeys(checkpoint.keys_bytes) } : undefined;
    if (stateFiles) {
      ctx.onCleanup(async () => {
        await stateFiles.output.close().catch(() => {});
        await stateFiles.keys.close().catch(() => {});
      });
    }
    const plainOutput = stateFiles ? undefined : await openOutput(options.output, ctx.stdout);
    const writer = await createRowWriter<LeadRow>(options.format, stateFiles?.output ?? plainOutput!.sink, {
      columns: options.columns,
      toJson: leadJson,
      escapeFormulas: options.escapeFormulas,
      resume: resumed ? { rowsWritten: checkpoint.rows_written, started: checkpoint.output_bytes > 0 } : undefined,
    });
    return new LeadOutput(ctx, options, writer, stateFiles, plainOutput);
  }

  /** One company's leads, and (with --state) their keys for --only-new. */
  async write(rows: LeadRow[]): Promise<void> {
    await this.writer.writeRows(rows);
    if (this.stateFiles && rows.length > 0) await this.stateFiles.keys.write(rows.map((row) => `${leadKey(row)}\n`).join(''));
  }

  /** With --state: the page is on disk, so the checkpoint may now point past it. */
  async commitPage(checkpoint: Checkpoint): Promise<void> {
    if (!this.stateFiles) return;
    checkpoint.output_bytes = this.stateFiles.output.bytes;
    checkpoint.keys_bytes = this.stateFiles.keys.bytes;
    await commitCheckpoint(this.stateFiles.state, checkpoint, [this.stateFiles.output, this.stateFiles.keys]);
  }

  get keepsCheckpoints(): boolean {
    return this.stateFiles !== undefined;
  }

  /** The finished rows become visible all at once: renamed over -o, or copied to stdout. */
  async publish(): Promise<void> {
    if (!this.stateFiles) {
      await this.plainOutput!.commit();
      return;
    }
    const { state, output } = this.stateFiles;
    await output.sync();
    if (this.options.output === undefined) {
      await pipeStreams(createReadStream(state.outputPath), this.ctx.stdout, { end: false });
      return;
    }
    const target = resolve(this.options.output);
    try {
      await rename(state.outputPath, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      // The state and the output are on different file systems: copy beside the target, then rename.
      const temp = tempPathFor(target);
      await copyFile(state.outputPath, temp);
      await rename(temp, target).catch(async (renameError) => {
        await rm(temp, { force: true });
        throw renameError;
      });
    }
  }

  /** A failed run without --state leaves no partial output; with it, the committed part stays for a resume. */
  async abort(): Promise<void> {
    await this.plainOutput?.abort();
  }
}

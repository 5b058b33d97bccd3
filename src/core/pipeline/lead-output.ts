import { createReadStream } from 'node:fs';
import { rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { assertReplaceable, copyFileAtomic, dropSidecar, syncDirectory } from '../../io/atomic-file.js';
import type { Column } from '../../io/columns.js';
import { openOutput, type Output } from '../../io/output.js';
import { outputTarget, type OutputTarget } from '../../io/output-target.js';
import { createRowWriter, type OutputFormat, type RowWriter } from '../../io/writers.js';
import type { RunContext } from '../../runtime/context.js';
import { leadChangeJson, leadJson, type LeadRow } from './lead-rows.js';
import { leadKeyLine } from '../state-store/lead-key.js';
import type { AppendOnlyFile } from '../../io/append-only-file.js';
import { commitCheckpoint, type Checkpoint } from './state/checkpoint.js';
import type { StateDirectory } from './state/state-directory.js';
import type { TextSink } from '../../io/sink.js';
import { RowSpool } from '../verification/spend-plan.js';

export interface LeadOutputOptions {
  format: OutputFormat;
  columns: ReadonlyArray<Column<LeadRow>>;
  escapeFormulas: boolean;
  bom: boolean;
  /** -o FILE; stdout without it. */
  output: string | undefined;
  /**
   * A paying run that plans first (spend-plan.ts): the rows wait unverified in a spool (current/rows
   * with --state, else a temporary file), and the output is written from it at the end (writeFrom).
   */
  spooled?: boolean;
  /** --changes: each lead's JSON carries its company's change fields. */
  changes?: boolean;
}

/**
 * Where a pipeline's leads go. With --state they are appended to current/output (and their keys to
 * current/keys), whose committed lengths the checkpoint keeps, and become visible only when the run
 * is done; without it they stream to the output as any export does. A spooled run appends to its
 * spool instead, and writes the output (in the state, or as any export) from it at the end.
 */
export class LeadOutput {
  private constructor(
    private readonly ctx: RunContext,
    private readonly options: LeadOutputOptions,
    private readonly writer: RowWriter<LeadRow>,
    private readonly stateFiles: { state: StateDirectory; output: AppendOnlyFile; keys: AppendOnlyFile } | undefined,
    private plainOutput: Output | undefined,
    readonly spool: RowSpool<LeadRow> | undefined,
  ) {}

  /** A spooled run with --state: current/output, written by finish from the spool. */
  private finalFile: AppendOnlyFile | undefined;

  static async open(
    ctx: RunContext,
    options: LeadOutputOptions,
    state: StateDirectory | undefined,
    checkpoint: Checkpoint,
    resumed: boolean,
  ): Promise<LeadOutput> {
    // Spooled, the checkpoint's output_bytes are the spool's: current/output is written at the end, from its start.
    const stateFiles = state
      ? {
          state,
          output: await (options.spooled
            ? state.openRows(checkpoint.output_bytes)
            : state.openOutput(checkpoint.output_bytes)),
          keys: await state.openKeys(checkpoint.keys_bytes),
        }
      : undefined;
    if (stateFiles) {
      ctx.onCleanup(async () => {
        await stateFiles.output.close().catch(() => {});
        await stateFiles.keys.close().catch(() => {});
      });
    }
    if (options.spooled) {
      const spool = stateFiles
        ? await RowSpool.over<LeadRow>(stateFiles.output, stateFiles.state.rowsPath)
        : await RowSpool.temporary<LeadRow>(ctx);
      return new LeadOutput(ctx, options, spool.writer, stateFiles, undefined, spool);
    }
    const plainOutput = stateFiles ? undefined : await openOutput(options.output, ctx.stdout);
    const writer = await LeadOutput.outputWriter(
      options,
      stateFiles?.output ?? plainOutput!.sink,
      resumed ? { rowsWritten: checkpoint.rows_written, started: checkpoint.output_bytes > 0 } : undefined,
    );
    return new LeadOutput(ctx, options, writer, stateFiles, plainOutput, undefined);
  }

  private static outputWriter(
    options: LeadOutputOptions,
    sink: TextSink,
    resume?: { rowsWritten: number; started: boolean },
  ): Promise<RowWriter<LeadRow>> {
    return createRowWriter<LeadRow>(options.format, sink, {
      columns: options.columns,
      toJson: options.changes ? leadChangeJson : leadJson,
      escapeFormulas: options.escapeFormulas,
      bom: options.bom,
      resume,
    });
  }

  /**
   * The end of the rows: closes the document (its meta last). A spooled run writes its whole output
   * here, from the spool.
   */
  async finish(meta: unknown, spooled?: (rows: AsyncIterable<LeadRow>) => AsyncIterable<LeadRow>): Promise<void> {
    if (!this.spool) {
      await this.writer.finish(meta);
      return;
    }
    let sink: TextSink;
    if (this.stateFiles) {
      const output = await this.stateFiles.state.openOutput(0);
      this.ctx.onCleanup(() => output.close().catch(() => {}));
      this.finalFile = output;
      sink = output;
    } else {
      this.plainOutput = await openOutput(this.options.output, this.ctx.stdout);
      sink = this.plainOutput.sink;
    }
    const writer = await LeadOutput.outputWriter(this.options, sink);
    const rows = spooled ? spooled(this.spool.rows()) : this.spool.rows();
    for await (const row of rows) await writer.writeRows([row]);
    await writer.finish(meta);
  }

  /** One company's leads, and (with --state) their keys for --only-new. */
  async write(rows: LeadRow[]): Promise<void> {
    await this.writer.writeRows(rows);
    if (this.stateFiles && rows.length > 0)
      await this.stateFiles.keys.write(rows.map((row) => `${leadKeyLine(row)}\n`).join(''));
  }

  /** With --state: the page is on disk, so the checkpoint may now point past it. */
  async commitPage(checkpoint: Checkpoint): Promise<void> {
    if (!this.stateFiles) return;
    checkpoint.output_bytes = this.stateFiles.output.bytes;
    checkpoint.keys_bytes = this.stateFiles.keys.bytes;
    await commitCheckpoint(this.stateFiles.state, checkpoint, [this.stateFiles.output, this.stateFiles.keys]);
  }

  /** Rows went straight to stdout or a device: a failed run leaves them there, incomplete. */
  get direct(): boolean {
    return this.plainOutput?.direct ?? false;
  }

  /** Where the rows go, for messages. */
  get path(): string | undefined {
    return this.options.output;
  }

  get keepsCheckpoints(): boolean {
    return this.stateFiles !== undefined;
  }

  /**
   * The finished rows become visible all at once: renamed over -o (then its directory fsynced, so the
   * rename survives a power cut before the exports ledger records the leads as exported), or copied to stdout,
   * a device or a FIFO. `sidecar` (FILE.meta.json) is removed just before the rename: the caller
   * writes the new one after, so a crash in between never leaves it beside the wrong file.
   */
  async publish(sidecar?: string): Promise<void> {
    const drop = sidecar === undefined ? undefined : () => dropSidecar(sidecar);
    if (!this.stateFiles) {
      await this.plainOutput!.commit(drop);
      return;
    }
    const { state } = this.stateFiles;
    await (this.finalFile ?? this.stateFiles.output).sync();
    const target = this.target;
    if (target.kind !== 'file') {
      const direct = await openOutput(this.options.output, this.ctx.stdout);
      for await (const chunk of createReadStream(state.outputPath)) await direct.sink.write(chunk as Buffer);
      await direct.commit();
      return;
    }
    await assertReplaceable(target.path);
    await drop?.();
    try {
      await rename(state.outputPath, target.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      // The state and the output are on different file systems.
      await copyFileAtomic(state.outputPath, target.path);
    }
    syncDirectory(dirname(target.path));
  }

  /** What -o names (stdout without it), looked at once: publish and the paths beside it agree. */
  private get target(): OutputTarget {
    this.knownTarget ??= this.options.output === undefined ? { kind: 'stdout' } : outputTarget(this.options.output);
    return this.knownTarget;
  }

  private knownTarget: OutputTarget | undefined;

  /** The regular file -o names, as an absolute path; undefined for stdout or a device. */
  get filePath(): string | undefined {
    const target = this.target;
    return target.kind === 'file' ? target.path : undefined;
  }

  /** Where FILE.meta.json goes: beside a regular -o file, nowhere for stdout or a device. */
  sidecarPath(suffix: string): string | undefined {
    const path = this.filePath;
    return path === undefined ? undefined : `${path}${suffix}`;
  }

  /** A failed run without --state leaves no partial output; with it, the committed part stays for a resume. */
  async abort(): Promise<void> {
    await this.plainOutput?.abort();
  }
}

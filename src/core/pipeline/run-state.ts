import { existsSync } from 'node:fs';
import { UsageError } from '../../exit-codes.js';
import { outputTarget } from '../../io/output-target.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf } from '../../ui/format-count.js';
import { newCheckpoint, readCheckpoint, type Checkpoint } from './state/checkpoint.js';
import { LocalExportsLedger, finishPublishedRun } from './state/exports-ledger.js';
import { StateDirectory } from './state/state-directory.js';
import { remoteJobName, requireTeamStore } from '../state-store/index.js';
import type { ExportsLedger } from '../state-store/types.js';
import { rm } from 'node:fs/promises';

/** The run's place in its --state directory: locked, and either resuming a checkpoint or starting one. */
export interface RunState {
  state: StateDirectory | undefined;
  /** What earlier runs exported (--only-new looks leads up there; a success adds this run's). */
  exportsLedger: ExportsLedger | undefined;
  checkpoint: Checkpoint;
  resumed: boolean;
}

export async function openRunState(
  ctx: RunContext,
  stateDir: string | undefined,
  fingerprint: string,
  formerFingerprints: readonly string[] = [],
): Promise<RunState> {
  const state = stateDir !== undefined ? await openState(ctx, stateDir) : undefined;
  if (state) ctx.onCleanup(await state.lock('pipeline'));
  const exportsLedger = state
    ? (state.remote?.leads ?? (await LocalExportsLedger.open(state, { exclusive: true })))
    : undefined;
  if (exportsLedger) ctx.onCleanup(() => exportsLedger.close());
  // A run that died between moving its output into place and recording it is recorded first,
  // whatever command this one is: its output is out there, so its leads are exported.
  const published = state && exportsLedger ? await finishPublishedRun(state, exportsLedger) : undefined;
  if (published !== undefined)
    ctx.reporter.info(
      `The run ${published} had put its output in place before it stopped; its leads are now recorded as exported.`,
    );
  const previous = state ? await readCheckpoint(state) : undefined;
  if (previous && previous.fingerprint !== fingerprint && !formerFingerprints.includes(previous.fingerprint)) {
    throw new UsageError(
      `--state ${stateDir} holds an unfinished run of a different command (other filters or options), ` +
        'so this one cannot resume from it.',
      state?.remote
        ? 'Run the original command again to finish it, or use another job name.'
        : 'Run the original command again to finish it, use another --state directory, ' +
            `or remove ${stateDir}/current to start over.`,
    );
  }
  const checkpoint = previous ?? newCheckpoint(fingerprint, new Date());
  state?.remote?.beginRun(checkpoint.run_id);
  if (previous)
    ctx.reporter.info(
      `Resuming the unfinished run ${checkpoint.run_id} ` +
        `(${countOf(checkpoint.rows_written, 'committed row')} already written).`,
    );
  return { state, exportsLedger, checkpoint, resumed: previous !== undefined };
}

/**
 * --only-new writes only the leads no earlier run exported: replacing a file that an earlier run on
 * this state wrote (`-o "leads-$(date +%F).csv"` run twice in a day) would lose its leads for good,
 * since the state counts them as exported. Refused before any call; a device or stdout is not a file
 * that holds anything.
 */
export async function refuseToReplaceExports(
  exportsLedger: ExportsLedger,
  output: string | undefined,
  stateDir: string,
): Promise<void> {
  if (output === undefined) return;
  const target = outputTarget(output);
  if (target.kind !== 'file' || !existsSync(target.path)) return;
  const earlier = await exportsLedger.runThatWrote(target.path);
  if (earlier === undefined) return;
  throw new UsageError(
    `${output} holds the ${countOf(earlier.rows, 'lead')} of the run ${earlier.run_id} ` +
      `(finished ${earlier.finished_at}), which --state ${stateDir} counts as exported; --only-new would ` +
      'replace them with only the leads that are new since, and they would never come out again.',
    `Move or rename ${output} first, or give another -o ` +
      '(with the time, for example: -o "leads-$(date +%F-%H%M).csv"; in a crontab write each % as \\%). ' +
      'Nothing was spent.',
  );
}

/** A --state directory, or (pg:NAME) a job of the team store mirrored in a private directory removed at the end. */
async function openState(ctx: RunContext, stateDir: string): Promise<StateDirectory> {
  const job = remoteJobName(stateDir);
  if (job === undefined) return StateDirectory.open(stateDir);
  const store = await requireTeamStore(ctx, stateDir);
  const state = await StateDirectory.mirror(store.job(job));
  ctx.onCleanup(() => rm(state.dir, { recursive: true, force: true }));
  return state;
}

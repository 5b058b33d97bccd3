import { UsageError } from '../../exit-codes.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf } from '../../ui/format-count.js';
import { newCheckpoint, readCheckpoint, type Checkpoint } from './checkpoint.js';
import { ExportsLedger, finishPublishedRun } from './exports-ledger.js';
import { StateDirectory } from './state-directory.js';

/** The run's place in its --state directory: locked, and either resuming a checkpoint or starting one. */
export interface RunState {
  state: StateDirectory | undefined;
  /** What earlier runs exported (--only-new looks leads up there; a success adds this run's). */
  ledger: ExportsLedger | undefined;
  checkpoint: Checkpoint;
  resumed: boolean;
}

export async function openRunState(ctx: RunContext, stateDir: string | undefined, fingerprint: string, formerFingerprints: readonly string[] = []): Promise<RunState> {
  const state = stateDir !== undefined ? await StateDirectory.open(stateDir) : undefined;
  if (state) ctx.onCleanup(await state.lock('pipeline'));
  const ledger = state ? await ExportsLedger.open(state, { exclusive: true }) : undefined;
  if (ledger) ctx.onCleanup(() => ledger.close());
  // A run that died between moving its output into place and recording it is recorded first,
  // whatever command this one is: its output is out there, so its leads are exported.
  const published = state && ledger ? await finishPublishedRun(state, ledger) : undefined;
  if (published !== undefined) ctx.reporter.info(`The run ${published} had put its output in place before it stopped; its leads are now recorded as exported.`);
  const previous = state ? await readCheckpoint(state) : undefined;
  if (previous && previous.fingerprint !== fingerprint && !formerFingerprints.includes(previous.fingerprint)) {
    throw new UsageError(
      `--state ${stateDir} holds an unfinished run of a different command (other filters or options), so this one cannot resume from it.`,
      `Run the original command again to finish it, use another --state directory, or remove ${stateDir}/current to start over.`,
    );
  }
  const checkpoint = previous ?? newCheckpoint(fingerprint, new Date());
  if (previous) ctx.reporter.info(`Resuming the unfinished run ${checkpoint.run_id} (${countOf(checkpoint.rows_written, 'committed row')} already written).`);
  return { state, ledger, checkpoint, resumed: previous !== undefined };
}

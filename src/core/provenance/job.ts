/**
 * `prospect provenance EMAIL`: whether the address was exported, by which runs (when, which job and
 * machine, to which file), from which licensed dataset, and when the address had last been confirmed
 * then. Read from the exports ledger of a --state directory, or the team's (every job) when a state URL
 * is set. The ledgers keep the address only keyed (the state's salt, or the team key), so a suppression
 * (`prospect forget`) does not remove it: a data-subject request that comes after the erasure is answered.
 */
import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ExitCode, UsageError } from '../../exit-codes.js';
import { checkEmailSyntax } from '../../io/emails.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf } from '../../ui/format-count.js';
import { displaySafe } from '../../util/display-safe.js';
import { sourceText } from '../contacts/rows.js';
import { LocalExportsLedger } from '../pipeline/state/exports-ledger.js';
import { StateDirectory } from '../pipeline/state/state-directory.js';
import { addressDigest } from '../state-store/lead-key.js';
import { teamStore } from '../state-store/index.js';
import type { AddressExport } from '../state-store/types.js';

export interface ProvenanceFlags {
  args: string[];
  state?: string;
}

export async function runProvenance(ctx: RunContext, flags: ProvenanceFlags): Promise<number> {
  if (flags.args.length !== 1) throw new UsageError('give one address: prospect provenance EMAIL.');
  const checked = checkEmailSyntax(flags.args[0]!);
  if (!checked.ok) throw new UsageError(`"${displaySafe(flags.args[0]!)}" is not an address (${checked.reason}).`);
  const digest = Buffer.from(addressDigest(checked.email), 'hex');
  const { where, exports } = await exportsOf(ctx, flags.state, digest);
  const address = displaySafe(checked.email);
  if (exports.length === 0) {
    ctx.stdout.write(`${address}: never exported (${displaySafe(where)}).\n`);
    return ExitCode.ok;
  }
  ctx.stdout.write(`${address}: exported by ${countOf(exports.length, 'run')} (${displaySafe(where)}):\n`);
  for (const found of exports) ctx.stdout.write(`${displaySafe(exportLine(found))}\n`);
  return ExitCode.ok;
}

/** "2026-12-01T10:00:00.000Z run 20261201T… job pg:weekly host a-1 file leads.csv source … last confirmed …" */
function exportLine({ job, lastSeen, record }: AddressExport): string {
  const file = record.output_path ?? record.output;
  const source = sourceText((record.source ?? null) as Parameters<typeof sourceText>[0]);
  return [
    `- ${record.finished_at}`,
    `run ${record.run_id}`,
    `job ${record.job ?? job}`,
    `host ${record.host ?? 'unknown'}`,
    `file ${file ? basename(file) : 'stdout'}`,
    `source ${source || 'unknown'}`,
    `last confirmed ${lastSeen ?? 'unknown'}`,
  ].join('  ');
}

async function exportsOf(
  ctx: RunContext,
  state: string | undefined,
  digest: Buffer,
): Promise<{ where: string; exports: AddressExport[] }> {
  if (state !== undefined && !state.startsWith('pg:')) {
    if (!existsSync(state)) throw new UsageError(`--state ${state} does not exist.`);
    if (!existsSync(join(state, 'exported.sqlite'))) return { where: `--state ${state}`, exports: [] };
    const ledger = await LocalExportsLedger.open(await StateDirectory.open(state));
    try {
      return { where: `--state ${state}`, exports: ledger.exportsOf(digest) };
    } finally {
      ledger.close();
    }
  }
  const team = await teamStore(ctx);
  if (!team)
    throw new UsageError(
      'provenance reads an exports ledger: give --state DIR (a pipeline state directory), or set a state URL.',
      'Only pipeline runs with --state record what they exported (docs/state-directory.md, docs/team.md).',
    );
  const job = state?.slice(3);
  const exports = (await team.exportsOf(digest)).filter((found) => job === undefined || found.job === `pg:${job}`);
  return { where: `the team store ${team.shown}`, exports };
}

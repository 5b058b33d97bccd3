/**
 * The snapshots of a state (--state DIR or pg:NAME) for one listing: the same filters, however they
 * were typed, are the same series.
 */
import { createHash } from 'node:crypto';
import { UsageError } from '../../exit-codes.js';
import { makeDirectoryDurable } from '../../io/atomic-file.js';
import { assertOwnDirectory } from '../../io/own-directory.js';
import type { RunContext } from '../../runtime/context.js';
import { remoteJobName, requireTeamStore } from '../state-store/index.js';
import type { SnapshotStore } from '../state-store/types.js';
import { CHANGE_KINDS, SeriesDiff, type ChangeKind, type ListingDiff } from './diff.js';

/**
 * The bundle's diff thread, relative to the chunk this module is in (scripts/bundle.mjs checks that
 * it is one); undefined unbundled (the tests of src/), where the diff runs in this thread.
 */
declare const PROSPECT_DIFF_THREAD: string | undefined;

/** A listing's diff; its store (or its thread) is closed when the run ends. */
export async function openListingDiff(
  ctx: RunContext,
  state: string,
  filters: Record<string, unknown>,
  takenAt: string,
  resumeId?: string,
  observe = true,
): Promise<ListingDiff> {
  const job = remoteJobName(state);
  if (job === undefined) prepareStateDir(state);
  if (job === undefined && typeof PROSPECT_DIFF_THREAD === 'string') {
    const { ThreadedDiff } = await import('./diff-thread.js');
    const setup = { stateDir: state, seriesKey: seriesKey(filters), takenAt, resumeId, observe };
    const diff = await ThreadedDiff.open(new URL(PROSPECT_DIFF_THREAD, import.meta.url), setup);
    ctx.onCleanup(() => diff.close());
    return diff;
  }
  const store: SnapshotStore =
    job === undefined
      ? await (await import('./local-store.js')).LocalSnapshotStore.open(state)
      : (await requireTeamStore(ctx, state)).snapshots(job);
  ctx.onCleanup(() => store.close());
  const series = await store.openSeries(seriesKey(filters), takenAt, resumeId);
  return new SeriesDiff(series, observe);
}

function prepareStateDir(state: string): void {
  try {
    makeDirectoryDurable(state, 0o700);
  } catch (error) {
    throw new UsageError(`cannot use --state ${state}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
  }
  assertOwnDirectory(state, `--state ${state}`);
}

/**
 * The series of a set of filters: their canonical form (names lower-cased, each list sorted), hashed.
 * `-t Shopify -t Klaviyo` and `-t klaviyo -t shopify` list the same companies.
 */
function seriesKey(filters: Record<string, unknown>): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical).sort();
    if (typeof value === 'string') return value.trim().toLowerCase();
    return value;
  };
  const entries = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => [name, canonical(Array.isArray(value) ? value : [value])] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash('sha256').update(JSON.stringify(entries)).digest('hex');
}

/** `--change new,changed`: the kinds to keep (all three without it). */
export function parseChangeKinds(text: string | undefined): ReadonlySet<ChangeKind> {
  if (text === undefined) return new Set(CHANGE_KINDS);
  const kinds = text
    .split(',')
    .map((kind) => kind.trim().toLowerCase())
    .filter(Boolean);
  const unknown = kinds.filter((kind) => !(CHANGE_KINDS as readonly string[]).includes(kind));
  if (unknown.length > 0 || kinds.length === 0)
    throw new UsageError(
      `--change ${text}: ${unknown.length > 0 ? `"${unknown[0]}" is not a kind` : 'no kind given'}.`,
      'Kinds: new, changed, gone (comma-separated).',
    );
  return new Set(kinds as ChangeKind[]);
}

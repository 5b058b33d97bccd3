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
import { CHANGE_KINDS, ListingDiff, type ChangeKind } from './diff.js';

/** A listing's diff, and the store to close when the run ends. */
export async function openListingDiff(
  ctx: RunContext,
  state: string,
  filters: Record<string, unknown>,
  takenAt: string,
  resumeId?: string,
  observe = true,
): Promise<ListingDiff> {
  const store = await openSnapshotStore(ctx, state);
  ctx.onCleanup(() => store.close());
  const series = await store.openSeries(seriesKey(filters), takenAt, resumeId);
  return new ListingDiff(series, series.resumed ? series.takenAt : takenAt, observe);
}

async function openSnapshotStore(ctx: RunContext, state: string): Promise<SnapshotStore> {
  const job = remoteJobName(state);
  if (job !== undefined) return (await requireTeamStore(ctx, state)).snapshots(job);
  try {
    makeDirectoryDurable(state, 0o700);
  } catch (error) {
    throw new UsageError(`cannot use --state ${state}: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`);
  }
  assertOwnDirectory(state, `--state ${state}`);
  const { LocalSnapshotStore } = await import('./local-store.js');
  return LocalSnapshotStore.open(state);
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

import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { writeFileAtomic } from '../../../io/atomic-file.js';
import { contactCountsSchema, countRows, type DomainRows } from '../../contacts/domain-rows.js';
import type { DomainContacts } from '../../contacts/fanout.js';
import { partitionSchema } from '../../companies/split.js';
import type { WalkPosition } from '../../companies/merge.js';
import { parseStoredJson } from '../../shared/stored-json.js';
import type { AppendOnlyFile } from '../../../io/append-only-file.js';
import type { StateDirectory } from './state-directory.js';

const count = z.number().int().nonnegative();

/** Counts that belong to committed output only, so they survive a resume exactly. */
const countersSchema = z.object({
  companies_seen: count.default(0),
  domains_with_contacts: count.default(0),
  truncated_at_limit: z.array(z.string()).default([]),
  contacts: contactCountsSchema.prefault({}),
  /** answers_lost and may_also_have_cost: what lost answers of committed pages may have cost (verifier.ts). */
  verification: z
    .object({
      from_cache: count.default(0),
      unchecked: count.default(0),
      answers_lost: count.default(0),
      may_also_have_cost: count.default(0),
      idempotency_claimed: z.boolean().default(false),
    })
    .prefault({}),
  /** --exclude-domains, --exclude-emails, `prospect forget`: companies and contacts kept out of the output. */
  excluded: z
    .object({ companies: count.default(0), contacts: count.default(0), suppressed: count.default(0) })
    .prefault({}),
  /** Companies the filters applied here (--industry, --max-rank, …) left out before any contacts call. */
  filtered_locally: count.default(0),
  /** --keep-empty: rows written for companies without a named contact. */
  kept_empty: count.default(0),
  /** --max stopped the listing while more companies matched. */
  stopped_at_max: z.boolean().default(false),
  /** --state: the committed pages' companies by kind against the last complete snapshot. */
  changes: z.object({ new: count.default(0), changed: count.default(0), unchanged: count.default(0) }).prefault({}),
});
export type Counters = z.output<typeof countersSchema>;

const walkPositionSchema = z.object({ cursor: z.string().nullable(), skip: count, done: z.boolean() });

const checkpointFields = z.object({
  version: z.literal(1),
  run_id: z.string().min(1),
  fingerprint: z.string(),
  command: z.string(),
  /** The run's clock, kept so a resumed run classifies freshness exactly as the first part did. */
  now: z.iso.datetime(),
  /**
   * Where each of the filters' service queries (or each part of `partition`) stands
   * (companies/walk.ts); null before the first page.
   */
  positions: z.array(walkPositionSchema).nullable(),
  /**
   * The parts the listing was split into (companies/split.ts), so a resume walks the same parts
   * from their positions. Absent: one cursor per query.
   */
  partition: partitionSchema.optional(),
  /** The last company page is committed: a resume only has to finish the output. */
  listing_done: z.boolean(),
  /** The provenance of the listing, so a resumed JSON document ends exactly as an uninterrupted one. */
  meta: z.object({ source: z.unknown().optional(), scope: z.unknown().optional() }).nullable(),
  output_bytes: count,
  keys_bytes: count,
  /**
   * The rows go to current/rows, unverified, and current/output is written from them at the end
   * (spend-plan.ts: a capped or asking --stale verify run); output_bytes then counts current/rows.
   */
  spooled: z.boolean(),
  rows_written: count,
  pages_done: count,
  counters: countersSchema.prefault({}),
});

/** An unfinished run, as current/checkpoint.json keeps it. */
export const checkpointSchema = checkpointFields.refine(
  (checkpoint) =>
    checkpoint.partition === undefined || checkpoint.positions?.length === checkpoint.partition.queries.length,
  {
    message: 'a partition needs one position per part',
    path: ['positions'],
  },
);
export type Checkpoint = z.output<typeof checkpointSchema>;

export function newCheckpoint(fingerprint: string, now: Date): Checkpoint {
  return checkpointSchema.parse({
    version: 1,
    run_id: newRunId(),
    fingerprint,
    command: 'pipeline',
    now: now.toISOString(),
    positions: null,
    listing_done: false,
    meta: null,
    output_bytes: 0,
    keys_bytes: 0,
    spooled: false,
    rows_written: 0,
    pages_done: 0,
  });
}

/** One company's leads are written: they count, in the checkpoint's counters, as committed output. */
export function countCompany(
  checkpoint: Checkpoint,
  found: Pick<DomainContacts<unknown>, 'domain' | 'contacts' | 'truncated'>,
  result: DomainRows,
): void {
  const { counters } = checkpoint;
  counters.companies_seen += 1;
  if (found.contacts.length > 0) counters.domains_with_contacts += 1;
  if (found.truncated) counters.truncated_at_limit.push(found.domain);
  countRows(counters.contacts, result);
  checkpoint.rows_written += result.rows.length;
}

/** A company chunk's last lead is written: a resume starts after it. */
export function passPage(
  checkpoint: Checkpoint,
  { positions, changes }: PageEnd,
  verification: Counters['verification'],
): void {
  checkpoint.positions = positions;
  checkpoint.listing_done = positions.every((position) => position.done);
  checkpoint.pages_done += 1;
  checkpoint.counters.verification = verification;
  if (changes) checkpoint.counters.changes = changes;
}

/** Where a company chunk ends: the walk's positions, and with --state the companies by kind up to it. */
export interface PageEnd {
  positions: WalkPosition[];
  changes?: ListedChanges;
}

export type ListedChanges = Counters['changes'];

/** The unfinished run in the state directory, checked against its schema; undefined when there is none. */
export async function readCheckpoint(state: StateDirectory): Promise<Checkpoint | undefined> {
  const text = await readFile(state.checkpointPath, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  return parseStoredJson(text, checkpointSchema, {
    name: `the checkpoint ${state.checkpointPath}`,
    startOver:
      `Remove ${state.currentDir} to start over: the unfinished run is dropped; ` +
      'earlier exports and paid verifications are kept.',
  });
}

/** The cursor is committed only after the data it covers is on disk (fsync), never before. */
export async function commitCheckpoint(
  state: StateDirectory,
  checkpoint: Checkpoint,
  files: AppendOnlyFile[],
): Promise<void> {
  for (const file of files) await file.sync();
  const json = JSON.stringify(checkpoint);
  await writeFileAtomic(state.checkpointPath, json, 0o600);
  // pg:NAME: the page's bytes, its lead keys and this checkpoint, in one transaction of the store.
  await state.remote?.commitPage(state, checkpoint, json);
}

function newRunId(): string {
  return `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${randomBytes(3).toString('hex')}`;
}

/** Identifies a command (its filters and options): a checkpoint resumes only the command that wrote it. */
export function fingerprint(parameters: unknown): string {
  return createHash('sha256').update(JSON.stringify(parameters)).digest('hex').slice(0, 16);
}

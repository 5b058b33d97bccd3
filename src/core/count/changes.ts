/**
 * `count --by change --state S`: how many companies are new, changed and gone since the state's last
 * complete listing of the same filters, and the technologies most added and removed, before any
 * export. The listing is walked and compared as `companies --changes` does, but nothing is kept: the
 * walk's snapshot is dropped, so the next export still compares with the same snapshot.
 */
import type { CompanyRow, ProspectClient } from '../../api/index.js';
import { UsageError } from '../../exit-codes.js';
import type { Column } from '../../io/columns.js';
import type { RunContext } from '../../runtime/context.js';
import { formatCount } from '../../ui/format-count.js';
import type { Progress } from '../../ui/progress.js';
import { openListingDiff } from '../changes/open.js';
import { companyQueries, filtersRecord, localRowFilter, type CompanyFilters } from '../companies/filters.js';
import { checkLocalTechnologies, walkCompanies } from '../companies/walk.js';
import { checkNativeSqlite } from '../state-store/native-sqlite.js';

/** The kinds a count tallies of the companies listed (the gone come from the diff's end). */
const LISTED_KINDS = new Set(['new', 'changed'] as const);

/** One line of the count: a kind of change, or a technology added or removed, and how many companies. */
export interface ChangeCountRow {
  measure: 'change' | 'added' | 'removed';
  value: string;
  companies: number;
}

export const CHANGE_COUNT_COLUMNS: ReadonlyArray<Column<ChangeCountRow>> = [
  { name: 'measure', get: (row) => row.measure },
  { name: 'value', get: (row) => row.value },
  { name: 'companies', get: (row) => row.companies },
];

interface ChangeCountOptions {
  filters: CompanyFilters;
  state?: string | undefined;
  top: number;
}

export async function countChanges(
  ctx: RunContext,
  client: ProspectClient,
  options: ChangeCountOptions,
  accept: ((row: CompanyRow) => boolean) | undefined,
  progress: Progress,
): Promise<{ rows: ChangeCountRow[]; previous: string | undefined }> {
  if (options.state === undefined)
    throw new UsageError('--by change compares with the snapshots kept in --state DIR (or pg:NAME): give one.');
  if (!options.state.startsWith('pg:')) await checkNativeSqlite();
  const takenAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const diff = await openListingDiff(ctx, options.state, filtersRecord(options.filters), takenAt, undefined, false);
  try {
    await checkLocalTechnologies(client, options.filters);
    const keep = localRowFilter(options.filters);
    const walk = walkCompanies(client, companyQueries(options.filters), { pageSize: ctx.global.pageSize });
    const kinds = { new: 0, changed: 0, gone: 0 };
    const added = new Map<string, number>();
    const removed = new Map<string, number>();
    const tally = (names: string[], into: Map<string, number>) => {
      for (const name of names) into.set(name, (into.get(name) ?? 0) + 1);
    };
    let seen = 0;
    for await (const chunk of walk.chunks) {
      const compared = await diff.page(keep ? chunk.rows.filter(keep) : chunk.rows, LISTED_KINDS);
      for (const row of accept ? compared.filter(accept) : compared) {
        if (row.change === 'unchanged') continue;
        kinds[row.change] += 1;
        tally(row.technologies_added, added);
        tally(row.technologies_removed, removed);
      }
      seen += chunk.rows.length;
      progress.update({ done: seen, total: undefined, noun: 'companies' });
    }
    for await (const page of diff.gone()) kinds.gone += accept ? page.filter(accept).length : page.length;
    const rows: ChangeCountRow[] = [
      ...(['new', 'changed', 'gone'] as const).map((kind) => ({
        measure: 'change' as const,
        value: kind,
        companies: kinds[kind],
      })),
      ...topOf(added, options.top).map(([value, companies]) => ({ measure: 'added' as const, value, companies })),
      ...topOf(removed, options.top).map(([value, companies]) => ({ measure: 'removed' as const, value, companies })),
    ];
    return { rows, previous: diff.previous?.takenAt };
  } finally {
    await diff.abandon();
  }
}

/** The N technologies most often added (or removed), most first, then by name; 0: all. */
function topOf(counts: Map<string, number>, top: number): Array<[string, number]> {
  const sorted = [...counts].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
  return top > 0 ? sorted.slice(0, top) : sorted;
}

/** The count as a terminal shows it. */
export function changeCountText(rows: readonly ChangeCountRow[], previous: string | undefined): string {
  const since = previous === undefined ? 'No complete listing yet: every company is new.' : `Since ${previous}:`;
  const lines = [since];
  for (const measure of ['change', 'added', 'removed'] as const) {
    const of = rows.filter((row) => row.measure === measure);
    if (of.length === 0) continue;
    if (measure !== 'change') lines.push(`Most ${measure}:`);
    for (const row of of) lines.push(`  ${row.value.padEnd(28)} ${formatCount(row.companies).padStart(9)}`);
  }
  return `${lines.join('\n')}\n`;
}

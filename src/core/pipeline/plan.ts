import { UsageError } from '../../exit-codes.js';
import type { RunContext } from '../../runtime/context.js';
import { filtersRecord, validateCompanyFilters } from '../companies/filters.js';
import { contactParameters, parseContactFlags } from '../contacts/options.js';
import { planOutput } from '../shared/output-plan.js';
import { LEAD_CHANGE_COLUMNS, LEAD_CHANGE_TABLE_COLUMNS, LEAD_COLUMNS, LEAD_TABLE_COLUMNS } from './lead-rows.js';
import { cacheCutoff } from '../verification/open-verifier.js';
import { fingerprint } from './state/checkpoint.js';
import type { ChangeKind } from '../changes/diff.js';
import { parseChangeKinds } from '../changes/open.js';
import type { PipelineOptions } from './options.js';

export type PipelinePlan = ReturnType<typeof planPipeline>;

/** --limit's default while the fingerprint had it in. */
const FORMER_DEFAULT_LIMIT = 200;

/**
 * Every check of the user's input, before the state is touched or a call made; and the command's
 * parameters, whose fingerprint ties a checkpoint to the command that wrote it.
 */
export function planPipeline(
  ctx: RunContext,
  options: PipelineOptions,
  verifyBudget: number | undefined,
  exclusions: Record<string, string[]> = {},
) {
  validateCompanyFilters(options.filters);
  const settings = parseContactFlags(options, new Date());
  if (options.onlyNew && options.state === undefined) {
    throw new UsageError('--only-new needs --state DIR: that is where earlier exports are remembered.');
  }
  const changeKinds = pipelineChangeKinds(options);
  const cacheFreshSince = cacheCutoff(options.cacheTtl, new Date());
  const { format, columns } = changeKinds
    ? planOutput(ctx, options, LEAD_CHANGE_COLUMNS, LEAD_CHANGE_TABLE_COLUMNS)
    : planOutput(ctx, options, LEAD_COLUMNS, LEAD_TABLE_COLUMNS);
  if (format === 'xlsx' && options.state !== undefined) {
    throw new UsageError(
      '--state cannot resume an .xlsx file: a workbook is one zip, not rows that can be continued.',
      'Write CSV with --state (-o leads.csv), or leave --state out.',
    );
  }
  const parameters = {
    filters: filtersRecord(options.filters),
    ...contactParameters(settings),
    // The cap in force (flag or config): a resume under another cap would not give the same file.
    verify_budget: verifyBudget ?? null,
    only_new: options.onlyNew,
    format,
    columns: columns.map((column) => column.name),
    escape_formulas: options.escapeFormulas,
    // Only when given, so the fingerprint of a run without them stays what it was (its checkpoint resumes).
    ...(options.max !== undefined ? { max: options.max } : {}),
    ...(options.keepEmpty ? { keep_empty: true } : {}),
    ...(options.bom ? { bom: true } : {}),
    ...(changeKinds ? { changes: [...changeKinds].sort() } : {}),
    ...exclusions,
  };
  // --limit changes the calls, never the output: it is left out of the fingerprint. A checkpoint
  // written while it was in (before issue 28; 200 was its default then) still resumes.
  const { limit, ...rest } = parameters;
  const formerFingerprints = [...new Set([limit, FORMER_DEFAULT_LIMIT])].map((former) =>
    fingerprint({ ...parameters, limit: former }),
  );
  return {
    format,
    columns,
    parameters,
    fingerprint: fingerprint(rest),
    formerFingerprints,
    cacheFreshSince,
    changeKinds,
  };
}

/** --changes: the kinds whose companies get contacts (new and changed by default); gone ones have none to ask. */
function pipelineChangeKinds(options: PipelineOptions): ReadonlySet<ChangeKind> | undefined {
  if (options.change !== undefined && !options.changes)
    throw new UsageError('--change keeps kinds of --changes: add it.');
  if (!options.changes) return undefined;
  if (options.state === undefined)
    throw new UsageError('--changes compares with the snapshots kept in --state DIR (or pg:NAME): give one.');
  if (options.max !== undefined)
    throw new UsageError(
      '--changes compares the whole listing with the last one; --max would cut it.',
      'Leave out --max; keep fewer kinds with --change new.',
    );
  const kinds = parseChangeKinds(options.change ?? 'new,changed');
  if (kinds.has('gone'))
    throw new UsageError(
      '--change gone: a pipeline asks contacts for the companies listed now, and a gone one is not.',
      'List them with `prospect companies --state DIR --changes --change gone` and pipe that into `prospect contacts`.',
    );
  return kinds;
}

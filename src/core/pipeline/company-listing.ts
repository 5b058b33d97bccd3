import type { CompanyRow, ProspectClient } from '../../api/index.js';
import { companyQueries, localStackFilter, type CompanyFilters } from '../company-filters.js';
import { listedCompanies } from '../company-set-count.js';
import { checkLocalTechnologies, walkCompanies } from '../company-walk.js';
import type { WalkPosition } from '../merge-walks.js';
import type { Checkpoint } from './checkpoint.js';

export interface CompanyItem {
  company: CompanyRow;
  /** Set on a chunk's last kept row: once it is written, the run can resume from these positions. */
  pageEnd?: { positions: WalkPosition[] };
  /** How many companies the service lists for the queries (the sum of their meta.total), for the progress bar. */
  listingTotal?: number | undefined;
}

/**
 * The companies a pipeline run still has to do, one at a time: every service query of the filters
 * merged (company-walk.ts), from the checkpoint's positions, with the filters the service cannot
 * express applied. The first page's provenance goes into the checkpoint, so a resumed JSON document
 * ends exactly as an uninterrupted one.
 */
export async function* listCompanies(
  client: Pick<ProspectClient, 'companies'>,
  filters: CompanyFilters,
  checkpoint: Checkpoint,
): AsyncGenerator<CompanyItem> {
  if (checkpoint.listing_done) return;
  await checkLocalTechnologies(client, filters);
  const keep = localStackFilter(filters);
  const walk = walkCompanies(client, companyQueries(filters), { positions: checkpoint.positions ?? undefined });
  for await (const chunk of walk.chunks) {
    const meta = walk.answers.find((answer) => answer?.kind === 'meta')?.meta;
    if (meta) checkpoint.meta ??= { source: meta.source, scope: meta.scope };
    const rows = keep ? chunk.rows.filter(keep) : chunk.rows;
    const listingTotal = listedCompanies(walk.answers);
    for (const [index, company] of rows.entries()) {
      yield index === rows.length - 1 ? { company, pageEnd: { positions: chunk.positions }, listingTotal } : { company, listingTotal };
    }
  }
}

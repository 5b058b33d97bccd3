import type { CompanyRow, ProspectClient } from '../../api/index.js';
import { localStackFilter, serviceQuery, type CompanyFilters } from '../company-filters.js';
import type { Checkpoint } from './checkpoint.js';

export interface CompanyItem {
  company: CompanyRow;
  /** Set on a page's last kept row: once it is written, the run can resume from this cursor. */
  pageEnd?: { nextCursor: string | null };
  /** How many companies the service lists for the query (meta.total), for the progress bar. */
  listingTotal?: number | undefined;
}

/**
 * The companies a pipeline run still has to do, one at a time: from the checkpoint's cursor, with
 * the filters the service cannot express applied. The first page's provenance goes into the
 * checkpoint, so a resumed JSON document ends exactly as an uninterrupted one.
 */
export async function* listCompanies(
  client: Pick<ProspectClient, 'companies'>,
  filters: CompanyFilters,
  checkpoint: Checkpoint,
): AsyncGenerator<CompanyItem> {
  if (checkpoint.listing_done) return;
  const keep = localStackFilter(filters);
  for await (const page of client.companies(serviceQuery(filters), { startCursor: checkpoint.cursor || undefined })) {
    checkpoint.meta ??= { source: page.meta.source, scope: page.meta.scope };
    const rows = keep ? page.data.filter(keep) : page.data;
    for (const [index, company] of rows.entries()) {
      const listingTotal = page.meta.total;
      yield index === rows.length - 1 ? { company, pageEnd: { nextCursor: page.nextCursor }, listingTotal } : { company, listingTotal };
    }
  }
}

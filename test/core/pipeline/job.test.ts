/**
 * runPipeline through its seam (src/runtime/job-deps.ts): in process, its client over a route stub
 * that fails the test on an unmatched request or an unused route: the companies listing, then one
 * contacts call for the companies' domains, and one lead row per contact. No socket, no state.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runPipeline, type PipelineFlags } from '../../../src/core/pipeline/job.js';
import { PIPELINE_FLAGS } from '../../../src/options/command-flags.js';
import { csvRecords } from '../../helpers/csv.js';
import { flagsFrom, jobContext } from '../../helpers/job-context.js';
import { routeStub } from '../../helpers/route-stub.js';
import { routeTwoCompanies } from '../../helpers/stub-rows.js';
import { scratchDir } from '../../helpers/scratch.js';

describe('runPipeline over a route stub', () => {
  it('lists the companies, asks once for their contacts, and writes one lead per contact', async () => {
    const stub = routeTwoCompanies(routeStub());
    const job = jobContext();
    const output = join(await scratchDir('prospect-pipeline-job-'), 'leads.csv');
    const flags = flagsFrom(PIPELINE_FLAGS, ['-t', 'Shopify', '-o', output]) as PipelineFlags;
    const code = await job.exitCodeOf(runPipeline(job.ctx, flags, job.depsOver(stub, new Date('2026-06-30'))));
    expect(code, job.stderr()).toBe(0);
    const leads = csvRecords(readFileSync(output, 'utf8'));
    expect(leads.map((lead) => [lead.domain, lead.business_email])).toEqual([
      ['a.com', 'ann@a.com'],
      ['b.com', 'bob@b.com'],
    ]);
  });
});

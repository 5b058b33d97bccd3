/**
 * runCount through its seam (src/runtime/job-deps.ts): in process, its client over a route stub that
 * fails the test on an unmatched request or an unused route. The count is the service's `meta.total`,
 * asked for with one call.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCount, type CountFlags } from '../../../src/core/count/job.js';
import { COUNT_FLAGS } from '../../../src/options/command-flags.js';
import { flagsFrom, jobContext } from '../../helpers/job-context.js';
import { routeStub } from '../../helpers/route-stub.js';
import { scratchDir } from '../../helpers/scratch.js';

describe('runCount over a route stub', () => {
  it("counts with one call and writes the service's total", async () => {
    const stub = routeStub();
    const answer = {
      data: [
        {
          domain: 'a.com',
          company_name: 'A',
          employee_range: null,
          industry: null,
          country: null,
          crux_rank: 1,
          tech_count: 1,
          technologies: [{ t: 'Shopify', c: 'ecommerce' }],
        },
      ],
      meta: { total: 48213, field_fill_rates: {} },
      next_cursor: 'c2',
    };
    stub.route('GET', '/api/v1/companies', { technology: 'Shopify' }, { body: answer });
    const job = jobContext();
    const output = join(await scratchDir('prospect-count-job-'), 'count.json');
    const flags = flagsFrom(COUNT_FLAGS, ['-t', 'Shopify', '-o', output]) as CountFlags;
    const code = await job.exitCodeOf(runCount(job.ctx, flags, job.depsOver(stub)));
    expect(code, job.stderr()).toBe(0);
    expect(stub.requests).toHaveLength(1);
    const written = JSON.parse(readFileSync(output, 'utf8')) as { data: unknown[]; meta: Record<string, unknown> };
    expect(written.data).toEqual([{ companies: 48213, contacts: null }]);
    expect(written.meta).toMatchObject({ counted_by: 'service', exact: { companies: true } });
  });
});

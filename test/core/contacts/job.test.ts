/**
 * runContacts through its seam (src/runtime/job-deps.ts): in process, its client over a route stub
 * that fails the test on an unmatched request or an unused route, and a fixed clock, so an address's
 * age is the same whatever day the test runs. No socket, no server, no worker.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runContacts, type ContactsFlags } from '../../../src/core/contacts/job.js';
import { CONTACTS_FLAGS } from '../../../src/options/command-flags.js';
import { csvRecords } from '../../helpers/csv.js';
import { flagsFrom, jobContext } from '../../helpers/job-context.js';
import { routeStub, type RouteStub } from '../../helpers/route-stub.js';
import { scratchDir } from '../../helpers/scratch.js';

const CONTACTS = '/api/v1/contacts';
const NOW = new Date('2026-06-30T12:00:00Z');
const DAY_MS = 24 * 60 * 60 * 1000;

function contact(domain: string, name: string, lastSeen: string) {
  const [first, last] = name.split(' ');
  return {
    domain,
    full_name: name,
    first_name: first,
    last_name: last,
    title: 'Chief Executive Officer',
    seniority: 'cxo',
    department: 'executive',
    business_email: `${first!.toLowerCase()}@${domain}`,
    business_email_last_seen: lastSeen,
    linkedin_url: null,
  };
}

async function run(domains: string[], words: string[], stub: RouteStub) {
  const job = jobContext();
  const output = join(await scratchDir('prospect-contacts-job-'), 'out.csv');
  const flags = { ...flagsFrom(CONTACTS_FLAGS, ['-o', output, ...words]), args: domains } as ContactsFlags;
  const code = await job.exitCodeOf(runContacts(job.ctx, flags, job.depsOver(stub, NOW)));
  return { code, output, stderr: job.stderr() };
}

describe('runContacts over a route stub, at a fixed moment', () => {
  const fresh = '2026-06-20';
  const stale = '2025-01-01';
  const answer = {
    data: [contact('a.com', 'Ann Lee', fresh), contact('b.com', 'Bob Ray', stale)],
    meta: { domains_requested: 2 },
    next_cursor: null,
  };

  it('asks once for both domains and writes each contact, its age counted from the given clock', async () => {
    const stub = routeStub();
    stub.route('GET', CONTACTS, { domain: 'a.com,b.com' }, { body: answer });
    const { code, output, stderr } = await run(['a.com', 'b.com'], [], stub);
    expect(code, stderr).toBe(0);
    const rows = csvRecords(readFileSync(output, 'utf8'));
    expect(rows.map((row) => row.business_email)).toEqual(['ann@a.com', 'bob@b.com']);
    const ageInDays = (day: string) => String(Math.floor((NOW.getTime() - Date.parse(`${day}T00:00:00Z`)) / DAY_MS));
    expect(rows.map((row) => row.email_age_days)).toEqual([ageInDays(fresh), ageInDays(stale)]);
  });

  it('--stale drop leaves out the address last seen before --max-age, by that clock', async () => {
    const stub = routeStub();
    stub.route('GET', CONTACTS, { domain: 'a.com,b.com' }, { body: answer });
    const { code, output, stderr } = await run(['a.com', 'b.com'], ['--max-age', '90d', '--stale', 'drop'], stub);
    expect(code, stderr).toBe(0);
    expect(csvRecords(readFileSync(output, 'utf8')).map((row) => row.business_email)).toEqual(['ann@a.com']);
  });

  it('a 403 plan_required is exit 4, and nothing is written', async () => {
    const stub = routeStub();
    const refusal = { error: { code: 'plan_required', message: 'contacts need the Growth plan' } };
    stub.route('GET', CONTACTS, { domain: 'a.com' }, { status: 403, body: refusal });
    const { code, output, stderr } = await run(['a.com'], [], stub);
    expect(code, stderr).toBe(4);
    expect(() => readFileSync(output)).toThrow(/ENOENT/);
  });
});

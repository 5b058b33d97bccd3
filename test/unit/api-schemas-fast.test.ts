import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompaniesResponseSchema, checkCompaniesResponse, checkSchema } from '../../src/api/schemas.js';
import { companiesPage, sampleCompany } from '../helpers/scripted-server.js';

/** The fast check must be indistinguishable from zod: same verdict, same message, same JSON out. */
function expectSameAsZod(json: unknown): void {
  // Each side gets its own copy, as each would get its own JSON.parse output.
  const text = JSON.stringify(json);
  const fast = checkCompaniesResponse(JSON.parse(text));
  const zod = checkSchema(CompaniesResponseSchema, JSON.parse(text));
  expect(fast.ok).toBe(zod.ok);
  if (fast.ok && zod.ok) expect(JSON.stringify(fast.value)).toBe(JSON.stringify(zod.value));
  else expect(fast).toEqual(zod);
}

const ROW_KEYS = ['domain', 'company_name', 'employee_range', 'industry', 'country', 'crux_rank', 'phone', 'linkedin_url', 'description', 'tech_count', 'technologies'];
const jsonValue = fc.jsonValue({ maxDepth: 2 });
const fieldValue = fc.oneof(fc.string(), fc.constant(''), fc.constant(null), fc.integer(), fc.double(), fc.constant(2 ** 60), fc.boolean(), jsonValue);
const entry = fc.oneof(
  { weight: 6, arbitrary: fc.record({ t: fc.string(), c: fc.string(), v: fc.oneof(fc.constant(null), fc.string()) }) },
  { weight: 2, arbitrary: fc.dictionary(fc.constantFrom('t', 'c', 'v', 'x', '0', '__proto__'), fc.oneof(fc.string(), jsonValue), { maxKeys: 5 }) },
  { weight: 1, arbitrary: jsonValue },
);
/** Rows near the contract shape: fields dropped, retyped, reordered, extras added anywhere. */
const row = fc
  .record({
    base: fc.constantFrom('a.com', 'b.example', ''),
    drop: fc.subarray(ROW_KEYS, { maxLength: 2 }),
    retype: fc.option(fc.tuple(fc.constantFrom(...ROW_KEYS), fieldValue), { nil: undefined }),
    extras: fc.dictionary(fc.constantFrom('zzz', 'brand_new', '7', '__proto__', 'domain'), jsonValue, { maxKeys: 2 }),
    extrasFirst: fc.boolean(),
    reverse: fc.boolean(),
    technologies: fc.array(entry, { maxLength: 4 }),
    description: fc.option(fc.string(), { nil: undefined }),
  })
  .map(({ base, drop, retype, extras, extrasFirst, reverse, technologies, description }) => {
    const company: Record<string, unknown> = { ...sampleCompany(base || 'x.com'), technologies, ...(description !== undefined ? { description } : {}) };
    if (base === '') company.domain = '';
    for (const key of drop) delete company[key];
    if (retype) company[retype[0]] = retype[1];
    let entries = Object.entries(company);
    if (reverse) entries = entries.reverse();
    const extra = Object.entries(extras);
    return JSON.parse(JSON.stringify(Object.fromEntries(extrasFirst ? [...extra, ...entries] : [...entries, ...extra]))) as unknown;
  });

describe('checkCompaniesResponse equals zod', () => {
  it('on pages of rows near the contract shape', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 4 }), fc.boolean(), (rows, validMeta) => {
        const page = { ...companiesPage([]), data: rows } as Record<string, unknown>;
        if (!validMeta) page.meta = { scope: 3 };
        expectSameAsZod(page);
      }),
      { numRuns: 2000 },
    );
  });

  it('on pages that are not pages', () => {
    for (const json of [null, [], 'text', 7, {}, { data: {} }, { data: null }, { data: [] }, { data: [1, 'a'] }, { ...companiesPage(['a.com']), next_cursor: 5 }]) expectSameAsZod(json);
  });

  it('on the contract shape, with descriptions, nulls and extra fields kept in place', () => {
    const page = companiesPage(['a.com', 'b.com', 'c.com']) as { data: Record<string, unknown>[] };
    page.data[0] = { ...page.data[0], description: 'shop', later: { kept: true } };
    page.data[1] = { ...page.data[1], phone: null, linkedin_url: null, technologies: [{ t: 'jQuery', c: 'JavaScript libraries', v: { odd: [1] }, since: 2019 }, { t: 'PHP', c: 'Languages' }] };
    expectSameAsZod(page);
    expect(checkCompaniesResponse(JSON.parse(JSON.stringify(page))).ok).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import {
  CompaniesResponseSchema,
  CompanyRowSchema,
  ContactSchema,
  ContactsEnvelopeSchema,
  SENIORITIES,
  TechnologyEntrySchema,
  VerifyAnswerSchema,
  checkSchema,
  isSeniority,
} from '../../src/api/schemas.js';
import { companiesPage, sampleCompany, sampleContact } from '../helpers/scripted-server.js';

describe('companies schemas', () => {
  it('accept the contract shape', () => {
    expect(CompaniesResponseSchema.safeParse(companiesPage(['a.com'], 'c1')).success).toBe(true);
  });

  it('keep unknown fields at every level', () => {
    const page: Record<string, unknown> = { ...companiesPage(['a.com']), extra_top: 1 };
    (page.data as Record<string, unknown>[])[0] = sampleCompany('a.com', {
      description: 'shop',
      brand_new: { nested: true },
      technologies: [{ t: 'Shopify', c: 'Ecommerce', v: '2.0', since: 2019 }],
    });
    (page as Record<string, unknown>).meta = { ...(page.meta as object), surprise: 'kept' };
    const parsed = CompaniesResponseSchema.parse(page);
    expect(parsed).toMatchObject({ extra_top: 1, meta: { surprise: 'kept' } });
    expect(parsed.data[0]).toMatchObject({ brand_new: { nested: true }, description: 'shop' });
    expect(parsed.data[0]?.technologies[0]).toMatchObject({ since: 2019 });
  });

  it('accept missing optional fields: phone, linkedin_url, description, next_cursor, total, contact_count', () => {
    const { phone, linkedin_url, ...row } = sampleCompany('a.com');
    void phone;
    void linkedin_url;
    const { total, ...meta } = companiesPage([]).meta as Record<string, unknown>;
    void total;
    expect(CompaniesResponseSchema.safeParse({ data: [row], meta }).success).toBe(true);
  });

  it('accept any JSON value as a technology version', () => {
    for (const v of [null, '3.6.0', 3, true, ['1', '2'], { major: 1 }]) {
      expect(TechnologyEntrySchema.safeParse({ t: 'x', c: 'y', v }).success).toBe(true);
    }
    expect(TechnologyEntrySchema.safeParse({ t: 'x', c: 'y' }).success).toBe(true);
  });

  it('read an integer sent as a numeric string as that integer, and no other text (issue 42)', () => {
    expect(CompanyRowSchema.parse(sampleCompany('a.com', { crux_rank: '12', tech_count: ' 3 ' }))).toMatchObject({
      crux_rank: 12,
      tech_count: 3,
    });
    for (const text of ['high', '', '1.5', '12abc', '0x10'])
      expect(CompanyRowSchema.safeParse(sampleCompany('a.com', { crux_rank: text })).success).toBe(false);
  });

  it('take null for every field but domain and crux_rank, and no meta at all (issue 42)', () => {
    const nulls = { company_name: null, employee_range: null, industry: null, country: null, tech_count: null };
    expect(CompanyRowSchema.safeParse(sampleCompany('a.com', nulls)).success).toBe(true);
    expect(CompanyRowSchema.parse(sampleCompany('a.com', { technologies: null })).technologies).toEqual([]);
    expect(CompanyRowSchema.safeParse(sampleCompany('a.com', { crux_rank: null })).success).toBe(false);
    expect(CompanyRowSchema.safeParse(sampleCompany(null as unknown as string)).success).toBe(false);
    const page = { data: [sampleCompany('a.com')] };
    expect(checkSchema(CompaniesResponseSchema, page)).toMatchObject({
      ok: true,
      value: { meta: { field_fill_rates: {} } },
    });
    const partial = {
      ...page,
      meta: { total: '2834', scope: null, field_fill_rates: { phone: null, linkedin_url: 3 } },
    };
    expect(checkSchema(CompaniesResponseSchema, partial)).toMatchObject({
      ok: true,
      value: { meta: { total: 2834, field_fill_rates: { linkedin_url: 3 } } },
    });
  });

  it('name the first problem in one line', () => {
    const page = companiesPage(['a.com', 'b.com']);
    (page.data as Record<string, unknown>[])[1] = sampleCompany('b.com', { crux_rank: 'high' });
    expect(checkSchema(CompaniesResponseSchema, page)).toEqual({
      ok: false,
      problem: expect.stringMatching(/^data\[1\]\.crux_rank: /),
    });
    const notArray = { ...companiesPage([]), data: { rows: [] } };
    expect(checkSchema(CompaniesResponseSchema, notArray)).toEqual({
      ok: false,
      problem: 'data: Invalid input: expected array, received object',
    });
  });
  it('accept nulls in the sparse fields, any technology version and extra entry fields, kept in place', () => {
    const page = companiesPage(['a.com', 'b.com']) as { data: Record<string, unknown>[] };
    page.data[0] = { ...page.data[0], description: 'shop', later: { kept: true } };
    page.data[1] = {
      ...page.data[1],
      phone: null,
      linkedin_url: null,
      technologies: [
        { t: 'jQuery', c: 'JavaScript libraries', v: { odd: [1] }, since: 2019 },
        { t: 'PHP', c: 'Languages' },
      ],
    };
    const checked = checkSchema(CompaniesResponseSchema, JSON.parse(JSON.stringify(page)));
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(checked.value.data[0]).toMatchObject({ description: 'shop', later: { kept: true } });
    expect(checked.value.data[1]).toMatchObject({ phone: null, linkedin_url: null });
    expect(checked.value.data[1]?.technologies).toEqual([
      { t: 'jQuery', c: 'JavaScript libraries', v: { odd: [1] }, since: 2019 },
      { t: 'PHP', c: 'Languages' },
    ]);
  });

  it('refuse what is not a page, an empty domain, a non-integer count or a bad cursor', () => {
    const notPages = [
      null,
      [],
      'text',
      7,
      {},
      { data: {} },
      { data: null },
      { data: [1, 'a'] },
      { ...companiesPage(['a.com']), next_cursor: { page: 5 } },
      { ...companiesPage(['a.com']), next_cursor: Number.NaN },
    ];
    for (const json of notPages) expect(checkSchema(CompaniesResponseSchema, json).ok).toBe(false);
    expect(CompanyRowSchema.safeParse(sampleCompany('')).success).toBe(false);
    // A number is a cursor some services send (an id, a page number): read as its digits (row 1b).
    const numbered = checkSchema(CompaniesResponseSchema, { ...companiesPage(['a.com']), next_cursor: 5 });
    expect(numbered.ok && numbered.value.next_cursor).toBe('5');
    expect(CompanyRowSchema.safeParse(sampleCompany('a.com', { tech_count: 2.5 })).success).toBe(false);
    expect(CompanyRowSchema.safeParse(sampleCompany('a.com', { crux_rank: 2 ** 60 })).success).toBe(false);
  });
});

describe('contact schema', () => {
  it('needs only domain; other known fields default to null', () => {
    expect(ContactSchema.parse({ domain: 'a.com' })).toEqual({
      domain: 'a.com',
      full_name: null,
      first_name: null,
      last_name: null,
      title: null,
      seniority: null,
      department: null,
      business_email: null,
      business_email_last_seen: null,
      linkedin_url: null,
    });
    expect(ContactSchema.safeParse({ full_name: 'x' }).success).toBe(false);
  });

  it('accepts a date-time (and any string) as business_email_last_seen, unchanged', () => {
    expect(
      ContactSchema.parse(sampleContact('a.com', { business_email_last_seen: '2025-01-15T10:00:00Z' }))
        .business_email_last_seen,
    ).toBe('2025-01-15T10:00:00Z');
  });

  it('keeps unknown fields', () => {
    expect(ContactSchema.parse(sampleContact('a.com', { phone_direct: '+1' }))).toMatchObject({ phone_direct: '+1' });
  });

  it('accepts the envelope (a bare array is read by the client: test/api/client.test.ts)', () => {
    expect(
      ContactsEnvelopeSchema.safeParse({
        data: [sampleContact('a.com')],
        meta: { source: { license: 'x' } },
        next_cursor: null,
      }).success,
    ).toBe(true);
  });

  it('seniorities', () => {
    expect(SENIORITIES).toEqual(['cxo', 'vp', 'director', 'manager', 'staff']);
    expect(isSeniority('vp')).toBe(true);
    expect(isSeniority('VP')).toBe(false);
    expect(ContactSchema.safeParse(sampleContact('a.com', { seniority: 'intern' })).success).toBe(false);
  });
});

describe('verify answer schema', () => {
  it('passes any status through and keeps unknown fields, in the envelope or bare', () => {
    const result = { email: 'a@b.com', status: 'catch_all', checked_at: '2025-01-01T00:00:00Z', mx: true };
    expect(VerifyAnswerSchema.parse({ data: result, meta: { units_used: 2 } })).toEqual({
      data: result,
      meta: { units_used: 2 },
    });
    expect(VerifyAnswerSchema.parse(result)).toEqual({ data: result });
    expect(VerifyAnswerSchema.parse({ email: 'a@b.com', status: 'valid' }).data.checked_at).toBeNull();
    expect(VerifyAnswerSchema.safeParse({ email: 'a@b.com' }).success).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { checkCompaniesPage } from '../../src/api/schemas.js';

const meta = {
  source: { dataset: 'd', method: 'm', publisher: 'p', history_since: '2019' },
  field_fill_rates: {},
  scope: 's',
};

function row(domain: string, technologies: unknown[]) {
  return {
    domain,
    company_name: domain,
    employee_range: '1-10',
    industry: 'i',
    country: 'c',
    crux_rank: 1000,
    tech_count: technologies.length,
    technologies,
  };
}

const body = {
  data: [
    row('a.com', [
      { t: 'jQuery', c: 'JavaScript libraries', v: null },
      { t: 'PHP', c: 'Languages', v: '8.2' },
      { t: 'Odd', c: 'X', v: null, extra: 1 },
    ]),
    row('b.com', [
      { t: 'jQuery', c: 'JavaScript libraries', v: null },
      { t: 'PHP', c: 'Languages', v: '8.2' },
      { t: 'Odd', c: 'X', v: null, extra: 1 },
    ]),
    row('c.com', [
      { t: 'jQuery', c: 'JavaScript libraries', v: '3.7.1' },
      { t: 'PHP', c: 'Languages', v: '7.4' },
      { t: 'Odd', c: 'X', v: null },
    ]),
  ],
  meta,
  next_cursor: null,
};
const text = JSON.stringify(body);

function checkedRows() {
  const checked = checkCompaniesPage(JSON.parse(text));
  if (!checked.ok) throw new Error(checked.problem);
  return checked.value.data.map((company) => company.technologies);
}

describe('checkCompaniesPage', () => {
  it('gives rows that run the same technology, category and version one entry object', () => {
    const [a, b] = checkedRows();
    expect(b![0]).toBe(a![0]);
    expect(b![1]).toBe(a![1]);
  });

  it('keeps an entry of its own where the version differs or an entry has fields of its own', () => {
    const [a, b, c] = checkedRows();
    expect(c![0]).not.toBe(a![0]);
    expect(c![1]).not.toBe(a![1]);
    expect(b![2]).not.toBe(a![2]);
    expect(c![2]).not.toBe(a![2]);
  });

  it('changes nothing a writer sees: the page serialises to the bytes it came as', () => {
    const checked = checkCompaniesPage(JSON.parse(text));
    expect(checked.ok && JSON.stringify(checked.value)).toBe(text);
  });

  it('still refuses a page of the wrong shape, naming the field', () => {
    const bad = checkCompaniesPage({ ...body, data: [{ ...body.data[0], crux_rank: 'first' }] });
    expect(bad).toMatchObject({ ok: false, problem: expect.stringContaining('data[0].crux_rank') });
  });
});

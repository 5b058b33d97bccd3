import { describe, expect, it } from 'vitest';
import { UnanswerableError, type CompaniesMeta, type CompanyRow } from '../../../src/api/index.js';
import {
  appliedAsSent,
  chooseSplitters,
  partQueries,
  proveSplit,
  splitLevels,
  worthSplitting,
} from '../../../src/core/companies/split.js';
import type { QueryAnswer } from '../../../src/core/companies/walk.js';

/** A row of the given stack; only `technologies` matters to the choice. */
const row = (rank: number, ...stack: string[]): CompanyRow => ({
  domain: `c${rank}.com`,
  company_name: `C${rank}`,
  employee_range: '1-10',
  industry: 'retail',
  country: 'france',
  crux_rank: rank,
  tech_count: stack.length,
  technologies: stack.map((t) => ({ t, c: 'x', v: null })),
});

const META = {
  source: { dataset: 'd', method: 'm', publisher: 'p', history_since: '2019' },
  scope: 's',
  field_fill_rates: {},
};
const counted = (total: number | undefined, technologies?: unknown): Extract<QueryAnswer, { kind: 'meta' }> => ({
  kind: 'meta',
  meta: { ...META, total, ...(technologies === undefined ? {} : { technologies }) } as CompaniesMeta,
});
const nobody: QueryAnswer = { kind: 'no_match', error: new UnanswerableError('nobody', { code: 'no_match' }) };

describe('how many parts', () => {
  it('is the largest power of two within --concurrency, at most 8', () => {
    expect([1, 2, 3, 4, 5, 7, 8, 9, 16, 32].map(splitLevels)).toEqual([0, 1, 1, 2, 2, 2, 3, 3, 3, 3]);
  });

  it('splits only a listing of more than 4 pages, or a --max that spans more than 4', () => {
    expect(worthSplitting(4000, 1000, undefined)).toBe(false);
    expect(worthSplitting(4001, 1000, undefined)).toBe(true);
    expect(worthSplitting(40_000, 1000, 4000)).toBe(false);
    expect(worthSplitting(40_000, 1000, 4001)).toBe(true);
    expect(worthSplitting(4001, 0, undefined)).toBe(false);
  });
});

describe('choosing the splitting technologies on the sample', () => {
  // 8 rows: A in 4 of them, B in 4 (2 with A, 2 without), C in all, D in 1, the user's own T in 4.
  const sample = [
    row(1, 'A', 'B', 'C', 'T'),
    row(2, 'A', 'B', 'C'),
    row(3, 'A', 'C', 'D', 'T'),
    row(4, 'A', 'C'),
    row(5, 'B', 'C', 'T'),
    row(6, 'B', 'C'),
    row(7, 'C', 'T'),
    row(8, 'C'),
  ];

  it('takes the technology that halves the sample, then the one that halves both halves', () => {
    expect(chooseSplitters(sample, 1, [])).toEqual(['A']);
    expect(chooseSplitters(sample, 2, [])).toEqual(['A', 'B']);
  });

  it('never takes a technology of the user (in any case), and stops when nothing makes the largest part smaller', () => {
    // Without A and B (avoided): T halves the sample; then C (in every row) and D (in one) leave a part of 4.
    expect(chooseSplitters(sample, 3, ['a', 'B'])).toEqual(['T']);
    // C is in every row: it splits nothing.
    expect(
      chooseSplitters(
        sample.map((r) => ({ ...r, technologies: r.technologies.filter((e) => e.t === 'C') })),
        3,
        [],
      ),
    ).toEqual([]);
  });

  it('breaks ties by name, so the same sample always gives the same parts', () => {
    const tied = [row(1, 'Zeta', 'Alpha'), row(2), row(3, 'Zeta', 'Alpha'), row(4)];
    expect(chooseSplitters(tied, 1, [])).toEqual(['Alpha']);
    expect(chooseSplitters([...tied].reverse(), 1, [])).toEqual(['Alpha']);
  });
});

describe('the part queries', () => {
  it("are every combination of each technology required or excluded, with the listing's own filters kept", () => {
    const parts = partQueries({ technology: 'jQuery', employeeRange: '11-500', country: 'france' }, ['A', 'B']);
    expect(parts).toEqual([
      {
        technology: 'jQuery',
        notTechnology: 'A',
        moreNotTechnologies: ['B'],
        employeeRange: '11-500',
        country: 'france',
      },
      { technology: 'jQuery', notTechnology: 'B', moreTechnologies: ['A'], employeeRange: '11-500', country: 'france' },
      { technology: 'jQuery', notTechnology: 'A', moreTechnologies: ['B'], employeeRange: '11-500', country: 'france' },
      { technology: 'jQuery', moreTechnologies: ['A', 'B'], employeeRange: '11-500', country: 'france' },
    ]);
  });

  it("keep the user's not_technology first", () => {
    expect(partQueries({ technology: 'jQuery', notTechnology: 'PHP' }, ['A'])).toEqual([
      { technology: 'jQuery', notTechnology: 'PHP', moreNotTechnologies: ['A'] },
      { technology: 'jQuery', notTechnology: 'PHP', moreTechnologies: ['A'] },
    ]);
  });
});

describe('whether the service answered a part as it was sent', () => {
  it('needs meta.technologies to name exactly the technologies of a kind sent more than once, in any case', () => {
    const query = { technology: 'jquery', notTechnology: 'A', moreNotTechnologies: ['B'] };
    expect(appliedAsSent(query, counted(1, { all_of: ['jQuery'], none_of: ['b', 'a'] }).meta)).toBe(true);
    expect(appliedAsSent(query, counted(1).meta)).toBe(false);
    expect(appliedAsSent(query, counted(1, { all_of: ['jQuery'], none_of: ['A'] }).meta)).toBe(false);
    expect(appliedAsSent(query, counted(1, { all_of: ['jQuery'], none_of: ['A', 'B', 'C'] }).meta)).toBe(false);
    expect(appliedAsSent(query, counted(1, 'jQuery, not A or B').meta)).toBe(false);
  });

  it('needs no echo for one technology of each kind, but a wrong one still counts against it', () => {
    const query = { technology: 'jQuery', notTechnology: 'A' };
    expect(appliedAsSent(query, counted(1).meta)).toBe(true);
    expect(appliedAsSent(query, counted(1, { all_of: ['jQuery'], none_of: [] }).meta)).toBe(false);
  });
});

describe('the proof that the parts are the set', () => {
  const parts = partQueries({ technology: 'T' }, ['A']);
  const echo = (i: number) => ({ all_of: i === 1 ? ['T', 'A'] : ['T'], none_of: i === 1 ? [] : ['A'] });

  it('holds when every part applied what it sent and their counts add up; an empty part counts 0', () => {
    expect(proveSplit(counted(10).meta, parts, [counted(4, echo(0)), counted(6, echo(1))])).toEqual({ complete: true });
    expect(proveSplit(counted(10).meta, parts, [nobody, counted(10, echo(1))])).toEqual({ complete: true });
  });

  it('fails when the counts do not add up, saying both', () => {
    const proof = proveSplit(counted(10).meta, parts, [counted(4, echo(0)), counted(7, echo(1))]);
    expect(proof).toEqual({ complete: false, why: "its 2 parts count 11 companies, not the set's 10" });
  });

  it("fails without a count of the set or of a part, or without a part's echo", () => {
    expect(proveSplit(counted(undefined).meta, parts, [counted(4, echo(0)), counted(6, echo(1))]).complete).toBe(false);
    expect(proveSplit(counted(10).meta, parts, [counted(4, echo(0)), counted(undefined, echo(1))]).complete).toBe(
      false,
    );
    expect(proveSplit(counted(10).meta, parts, [counted(4, echo(0)), counted(6)])).toMatchObject({
      complete: false,
      why: expect.stringContaining('meta.technologies'),
    });
    expect(proveSplit(counted(10).meta, parts, [counted(4, echo(0)), undefined]).complete).toBe(false);
  });
});

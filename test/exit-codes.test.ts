import { describe, expect, it } from 'vitest';
import { errorFromResponse } from '../src/api/index.js';
import { ExitCode, exitCodeOf, knownFailure } from '../src/exit-codes.js';

const unanswerable = (error: Record<string, unknown>) =>
  errorFromResponse({ endpoint: '/companies', status: 422, bodyText: JSON.stringify({ error }) });

describe('exitCodeOf: what a 422 means for the command line', () => {
  it.each(['unknown_technology', 'unknown_country', 'unknown_employee_range', 'contradictory_filters'])(
    '%s names something that does not exist: exit 2, like any bad value',
    (code) => {
      expect(exitCodeOf(unanswerable({ code, reason: 'no such thing' }))).toBe(ExitCode.usage);
    },
  );

  it.each([
    ['no_match', 'nobody'],
    ['something_new', 'no results for these filters'],
  ])('%s: valid filters the service will not answer, exit 3', (code, reason) => {
    expect(exitCodeOf(unanswerable({ code, reason }))).toBe(ExitCode.unanswerable);
  });

  it('a 422 with a code of its own whose words say neither: exit 5, never "nothing matched" (row 7c)', () => {
    expect(exitCodeOf(unanswerable({ code: 'something_new', reason: 'nobody' }))).toBe(ExitCode.service);
  });

  it('an unknown country without suggestions says how countries may be written', () => {
    expect(
      knownFailure(unanswerable({ code: 'unknown_country', reason: "'atlantis' is not a country", suggestions: [] }))
        ?.hint,
    ).toMatch(/US, UK, Deutschland/);
    expect(
      knownFailure(
        unanswerable({
          code: 'unknown_country',
          reason: "'frnace' is not a country. Did you mean: france?",
          suggestions: ['france'],
        }),
      )?.hint,
    ).toBeUndefined();
  });
});

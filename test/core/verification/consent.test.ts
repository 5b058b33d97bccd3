/**
 * The spend question as a terminal shows it (issue 36: no line wider than the terminal or breaking
 * a word). At 100 columns the unwrapped prompt ran to 117 characters and the terminal split "units".
 */
import { describe, expect, it } from 'vitest';
import { spendPrompt, spendQuestion } from '../../../src/core/verification/consent.js';

const QUESTION = spendQuestion({ addresses: 349, alreadyPaid: 100 }, 200, '--verify-budget');
const CHOICES = 'Continue? [y/N, or a number of units to cap it at]';

describe('spendPrompt', () => {
  it('is one line, ending in a space for the answer, when it fits', () => {
    expect(spendPrompt('Verifying 2 addresses: 0 already paid for, 2 to pay for, 2 units.', 120)).toBe(
      `Verifying 2 addresses: 0 already paid for, 2 to pay for, 2 units. ${CHOICES} `,
    );
  });

  it.each([40, 60, 80, 100, 120])(
    'at %i columns: every line fits, no word is cut, the choices stay whole',
    (columns) => {
      const prompt = spendPrompt(QUESTION, columns);
      const lines = prompt.split('\n');
      // The answer's space included: the cursor stays on the last line.
      for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(columns);
      expect(prompt.split(/\s+/).filter(Boolean)).toEqual(`${QUESTION} ${CHOICES}`.split(' '));
      if (columns >= 60) expect(lines.at(-1)).toBe(`${CHOICES} `);
    },
  );
});

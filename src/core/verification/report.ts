import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { displaySafe } from '../../util/display-safe.js';
import type { VerificationSnapshot } from './open-verifier.js';

/**
 * The verification lines after a run, the same for every command that verifies: what was spent
 * (a detail for the terminal), and caveats that reach cron too: when the budget left addresses
 * unchecked ("verified 100 of 349; 249 left unchecked (budget)"), and when answers lost on the way
 * back may have cost more than the units counted ("at most 23 units charged ...").
 */
export function reportVerification(ctx: RunContext, snapshot: VerificationSnapshot): void {
  const { units_spent, from_cache, unchecked } = snapshot;
  const checked = units_spent + from_cache;
  if (checked + unchecked + snapshot.answers_lost === 0) return;
  ctx.reporter.info(
    `Verified ${countOf(checked, 'address', 'addresses')}: ${countOf(units_spent, 'unit')} charged, ` +
      `${formatCount(from_cache)} already paid for.`,
  );
  const uncertain = mostCharged(snapshot);
  if (uncertain !== undefined) ctx.reporter.caveat(uncertain);
  const unknown = unknownStatusesCaveat(snapshot.unknown_statuses);
  if (unknown !== undefined) ctx.reporter.caveat(unknown);
  if (unchecked > 0)
    ctx.reporter.caveat(
      `verified ${formatCount(checked)} of ${formatCount(checked + unchecked)}; ` +
        `${formatCount(unchecked)} left unchecked (budget)`,
    );
}

/** The caveat when the service may have charged more than the answers show; undefined when it cannot have. */
function mostCharged(snapshot: VerificationSnapshot): string | undefined {
  const { units_spent, units_spent_at_most, answers_lost } = snapshot;
  if (units_spent_at_most <= units_spent) return undefined;
  const why =
    snapshot.idempotency === 'confirmed'
      ? `the answer to ${countOf(units_spent_at_most - units_spent, 'paid call')} never arrived, ` +
        'and the service may have charged for it'
      : `${countOf(answers_lost, 'answer')} to paid calls never arrived, and the service does not confirm that ` +
        'it honours Idempotency-Key, so each may have been charged';
  const most = countOf(units_spent_at_most, 'unit');
  return `at most ${most} charged, ${formatCount(units_spent)} of them for certain: ${why}`;
}

/**
 * Words the service answered that no known vocabulary names: each address was read as `unknown`, never
 * `valid`, and the setting that says what the word means is named (contract row 22, issue 42).
 */
function unknownStatusesCaveat(words: Record<string, number> | undefined): string | undefined {
  if (words === undefined) return undefined;
  const entries = Object.entries(words);
  const shown = entries
    .slice(0, 5)
    .map(([word, count]) => `"${displaySafe(word).slice(0, 40)}" ${formatCount(count)}`)
    .join(', ');
  const total = entries.reduce((sum, [, count]) => sum + count, 0);
  return (
    `${countOf(total, 'verification')} answered with a status prospect does not know (${shown}), kept as ` +
    `unknown: say what it means with \`prospect config set verify-statuses ${entries[0]![0].slice(0, 40)}=risky\`` +
    ' (theirs=ours; ours valid, invalid, risky or unknown)'
  );
}

import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import type { VerificationSnapshot } from './open-verifier.js';

/**
 * The verification lines after a run, the same for every command that verifies: what was spent
 * (a detail for the terminal), and, when the budget left addresses unchecked, a caveat that reaches
 * cron too: "verified 100 of 349; 249 left unchecked (budget)".
 */
export function reportVerification(
  ctx: RunContext,
  { units_spent, from_cache, unchecked }: VerificationSnapshot,
): void {
  const checked = units_spent + from_cache;
  if (checked + unchecked === 0) return;
  ctx.reporter.info(
    `Verified ${countOf(checked, 'address', 'addresses')}: ${countOf(units_spent, 'unit')} spent, ` +
      `${formatCount(from_cache)} already paid for.`,
  );
  if (unchecked > 0)
    ctx.reporter.caveat(
      `verified ${formatCount(checked)} of ${formatCount(checked + unchecked)}; ` +
        `${formatCount(unchecked)} left unchecked (budget)`,
    );
}

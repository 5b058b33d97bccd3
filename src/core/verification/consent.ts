import { closeSync, openSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { ReadStream } from 'node:tty';
import { CancelledError, UsageError } from '../../exit-codes.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';

/**
 * Consent to spend paid units, decided the same way for `verify`, `contacts --stale verify` and
 * `pipeline --stale verify`. A person at a terminal is asked, with the estimate, before the first
 * paid call (`--yes` skips the question). Off a terminal nothing can ask: a run that would pay
 * needs a cap (`--verify-budget N`, or a `verify-budget` in `prospect config`) or `--yes`, and
 * without one exits 2 before any paid call.
 */
export interface SpendFlags {
  /** --yes: spend without asking. */
  yes: boolean;
  /** --verify-budget (or verify's --budget); undefined when not given. */
  budget: number | undefined;
}

/** What the prompt tells the person before anything is paid. */
export interface SpendEstimate {
  /** Distinct valid addresses that need a check. */
  addresses: number;
  /** Of those, already paid for (in the ledger, or verified in the input). */
  alreadyPaid: number;
  /** The whole run is known (verify); false while contacts are still arriving (contacts, pipeline). */
  complete: boolean;
}

const WAYS_TO_AGREE = 'Cap it with --verify-budget N, agree to any spend with --yes, or set a default cap once: prospect config set verify-budget N.';

export class SpendConsent {
  private constructor(
    private readonly ctx: RunContext,
    /** The cap: --verify-budget, else the config's verify-budget; undefined: none. */
    readonly budget: number | undefined,
    private readonly budgetFrom: string | undefined,
    private readonly yes: boolean,
  ) {}

  /** Reads the config's default cap when no flag gives one. */
  static async decide(ctx: RunContext, flags: SpendFlags): Promise<SpendConsent> {
    if (flags.budget !== undefined) return new SpendConsent(ctx, flags.budget, '--verify-budget', flags.yes);
    const { readConfigValues } = await import('../../config/store.js');
    const fromConfig = readConfigValues(ctx.env).verifyBudget;
    return new SpendConsent(ctx, fromConfig, fromConfig === undefined ? undefined : 'config verify-budget', flags.yes);
  }

  /**
   * Whether a person can answer: stderr is a terminal, and so is stdin, or the process has a
   * controlling terminal to read the answer from (`companies | contacts --stale verify` typed at a
   * terminal: stdin is the pipe, the person is on /dev/tty).
   */
  private get interactive(): boolean {
    return Boolean(this.ctx.stderr.isTTY) && (Boolean(this.ctx.stdin.isTTY) || controllingTerminal() !== undefined);
  }

  /** Off a terminal, a run that may pay needs a cap or --yes: exit 2, before any paid call and any output. */
  assertMayPay(what: string): void {
    if (this.interactive || this.yes || this.budget !== undefined) return;
    throw new UsageError(`${what} pays one unit per address, and off a terminal prospect cannot ask first; nothing was spent.`, WAYS_TO_AGREE);
  }

  /**
   * On a terminal (and without --yes), shows the estimate and asks; "no", or Ctrl-C, is a
   * CancelledError (exit 130), before any unit is spent. Anywhere else, consent was given by a cap or --yes.
   */
  async confirm(estimate: SpendEstimate, askOver = 0): Promise<void> {
    if (this.yes || !this.interactive) return;
    const toPay = estimate.addresses - estimate.alreadyPaid;
    const units = Math.min(toPay, this.budget ?? Number.POSITIVE_INFINITY);
    if (estimate.complete && units <= askOver) return;
    const keyboard = this.ctx.stdin.isTTY ? undefined : new ReadStream(openSync(controllingTerminal()!, 'r'));
    const prompt = createInterface({ input: keyboard ?? this.ctx.stdin, output: this.ctx.stderr });
    try {
      const answer = await prompt.question(`${spendQuestion(estimate, this.budget, this.budgetFrom)} Continue? [y/N] `, { signal: this.ctx.signal });
      if (!/^y(es)?$/i.test(answer.trim())) throw new CancelledError();
    } catch (error) {
      if (error instanceof CancelledError) throw error;
      // Ctrl-C at the question (readline's AbortError, or SIGINT itself): the same answer as "no",
      // on a line of its own.
      this.ctx.stderr.write('\n');
      throw new CancelledError();
    } finally {
      prompt.close();
      keyboard?.destroy();
    }
  }
}

const TERMINAL = '/dev/tty';
let terminal: { path: string | undefined } | undefined;

/** /dev/tty when the process has a controlling terminal that it can read; undefined otherwise (cron, CI, a service). */
function controllingTerminal(): string | undefined {
  terminal ??= { path: canRead(TERMINAL) ? TERMINAL : undefined };
  return terminal.path;
}

function canRead(path: string): boolean {
  try {
    closeSync(openSync(path, 'r'));
    return true;
  } catch {
    return false;
  }
}

/**
 * "Verifying 349 addresses: 100 already paid for, 249 to pay for, 200 units at most (--verify-budget 200)."
 * While contacts still arrive: "Found 12 addresses to verify so far: …; more may follow, one unit each, with no cap."
 */
export function spendQuestion(estimate: SpendEstimate, budget: number | undefined, budgetFrom: string | undefined): string {
  const toPay = estimate.addresses - estimate.alreadyPaid;
  const addresses = countOf(estimate.addresses, 'address', 'addresses');
  const found = estimate.complete ? `Verifying ${addresses}` : `Found ${addresses} to verify so far`;
  const known = `${formatCount(estimate.alreadyPaid)} already paid for, ${formatCount(toPay)} to pay for`;
  const cap = budget === undefined ? undefined : `${budgetFrom} ${formatCount(budget)}`;
  if (estimate.complete) {
    const units = countOf(Math.min(toPay, budget ?? Number.POSITIVE_INFINITY), 'unit');
    return `${found}: ${known}, ${cap === undefined ? units : `${units} at most (${cap})`}.`;
  }
  return `${found}: ${known}; more may follow, one unit each, ${cap === undefined ? 'with no cap' : `${countOf(budget!, 'unit')} at most (${cap})`}.`;
}

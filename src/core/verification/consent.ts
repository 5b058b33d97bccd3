import { closeSync, openSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { ReadStream } from 'node:tty';
import { settingOf } from '../../config/precedence.js';
import { CancelledError, DeclinedError, UsageError } from '../../exit-codes.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { terminalSize } from '../../ui/terminal-size.js';
import { wrapWords } from '../../ui/wrap.js';

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
  /** Of those, already paid for (in the verification ledger, or verified in the input). */
  alreadyPaid: number;
  /** What is left of the cap (a resumed run has spent part of it); undefined: the whole cap, or none. */
  budgetLeft?: number | undefined;
}

const WAYS_TO_AGREE =
  'Cap it with --verify-budget N, agree to any spend with --yes, or set a default cap once: ' +
  'prospect config set verify-budget N.';

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
    const { readConfigValues } = await import('../../config/store.js');
    const budget = settingOf('verify-budget', {
      flag: { name: '--verify-budget', value: flags.budget },
      env: ctx.env,
      config: () => readConfigValues(ctx.env).verifyBudget,
    });
    const from =
      budget === undefined ? undefined : budget.source === 'flag' ? '--verify-budget' : 'config verify-budget';
    return new SpendConsent(ctx, budget?.value, from, flags.yes);
  }

  /**
   * Whether a person can answer: stderr is a terminal, and so is stdin, or the process has a
   * controlling terminal to read the answer from (`companies | contacts --stale verify` typed at a
   * terminal: stdin is the pipe, the person is on /dev/tty).
   */
  private get interactive(): boolean {
    return Boolean(this.ctx.stderr.isTTY) && (Boolean(this.ctx.stdin.isTTY) || controllingTerminal() !== undefined);
  }

  /**
   * Whether the run plans its spend over all its addresses before paying (spend-plan.ts): a cap
   * goes to the oldest addresses, and a question states the exact count. Only --yes without a cap
   * needs neither, and verifies as the rows arrive.
   */
  get plansFirst(): boolean {
    return this.budget !== undefined || !this.yes;
  }

  /** Off a terminal, a run that may pay needs a cap or --yes: exit 2, before any paid call and any output. */
  assertMayPay(what: string): void {
    if (this.interactive || this.yes || this.budget !== undefined) return;
    throw new UsageError(
      `${what} pays one unit per address, and off a terminal prospect cannot ask first; nothing was spent.`,
      WAYS_TO_AGREE,
    );
  }

  /**
   * On a terminal (and without --yes), shows the count and asks; "no" is a DeclinedError (exit 2),
   * Ctrl-C a CancelledError (exit 130), both before any unit is spent. A number for an answer is a cap (the
   * oldest addresses first), resolved to; "yes" resolves to undefined, and so does any run that is
   * not asked: consent was given by a cap or --yes.
   */
  async confirm(estimate: SpendEstimate, askOver = 0): Promise<number | undefined> {
    if (this.yes || !this.interactive) return undefined;
    const toPay = estimate.addresses - estimate.alreadyPaid;
    const units = Math.min(toPay, estimate.budgetLeft ?? this.budget ?? Number.POSITIVE_INFINITY);
    if (units <= askOver) return undefined;
    const keyboard = this.ctx.stdin.isTTY ? undefined : new ReadStream(openSync(controllingTerminal()!, 'r'));
    const prompt = createInterface({ input: keyboard ?? this.ctx.stdin, output: this.ctx.stderr });
    try {
      const answer = (
        await prompt.question(
          spendPrompt(
            spendQuestion(estimate, this.budget, this.budgetFrom),
            terminalSize(this.ctx.stderr as { columns?: number }).columns,
          ),
          { signal: this.ctx.signal },
        )
      ).trim();
      if (/^\d+$/.test(answer)) return Number(answer);
      if (!/^y(es)?$/i.test(answer)) throw new DeclinedError();
      return undefined;
    } catch (error) {
      if (error instanceof DeclinedError) throw error;
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

const CHOICES = 'Continue? [y/N, or a number of units to cap it at]';

/**
 * The question and its choices as a terminal of `columns` shows them: on one line when they fit, else
 * the question wrapped at spaces and the choices on a line of their own (the terminal would break
 * "units" in two). One column is kept for the space before the answer.
 */
export function spendPrompt(question: string, columns: number): string {
  const width = Math.max(1, columns - 1);
  const oneLine = `${question} ${CHOICES}`;
  const text =
    wrapWords(oneLine, width) === oneLine ? oneLine : `${wrapWords(question, width)}\n${wrapWords(CHOICES, width)}`;
  return `${text} `;
}

/**
 * "Verifying 349 addresses: 100 already paid for, 249 to pay for, 200 units at most (--verify-budget 200),
 * the oldest first." Every count is exact: the run has found all its addresses before it asks.
 */
export function spendQuestion(
  estimate: SpendEstimate,
  budget: number | undefined,
  budgetFrom: string | undefined,
): string {
  const toPay = estimate.addresses - estimate.alreadyPaid;
  const known = `${formatCount(estimate.alreadyPaid)} already paid for, ${formatCount(toPay)} to pay for`;
  const cap = estimate.budgetLeft ?? budget;
  const units = countOf(Math.min(toPay, cap ?? Number.POSITIVE_INFINITY), 'unit');
  const left = estimate.budgetLeft === undefined ? '' : `, ${formatCount(estimate.budgetLeft)} left`;
  const capText = budget === undefined ? undefined : `${budgetFrom} ${formatCount(budget)}${left}`;
  const spend =
    capText === undefined ? units : `${units} at most (${capText})${cap! < toPay ? ', the oldest first' : ''}`;
  return `Verifying ${countOf(estimate.addresses, 'address', 'addresses')}: ${known}, ${spend}.`;
}

/**
 * How a run that verified ends when the service did not answer as the contract says (contract rows
 * 22-23, issue 42): the run keeps every row and ends with one of these errors once its output is
 * written. A verify endpoint that refused a paid call: 402 is the account's (exit 4, as a plan is);
 * any other 4xx means prospect and the service disagree on how to call it (exit 5). Statuses no
 * vocabulary names: exit 5, the rows written as `unknown`. Each names the setting that adapts to it.
 */
import type { ContractSetting, RequestError } from '../../api/index.js';
import { CliError, ExitCode } from '../../exit-codes.js';
import { countOf, formatCount } from '../../ui/format-count.js';
import { displaySafe } from '../../util/display-safe.js';
import type { VerificationRun } from './verifier.js';

/** The settings that say how the service is called for a verification, typed by the one list of them. */
const VERIFY_SETTINGS: Record<'path' | 'method' | 'param' | 'statuses', ContractSetting> = {
  path: 'verify-path',
  method: 'verify-method',
  param: 'verify-param',
  statuses: 'verify-statuses',
};

/** What a verifying run ends with once its rows are written, or undefined when it ends well. */
export function verificationEnding(
  verifier: { readonly refusal: RequestError | undefined; readonly run: VerificationRun } | undefined,
): CliError | undefined {
  if (verifier === undefined) return undefined;
  if (verifier.refusal) return paidEndpointRefused(verifier.refusal, verifier.run.unchecked);
  if (verifier.run.unknownStatuses.size > 0) return unknownStatuses(verifier.run.unknownStatuses);
  return undefined;
}

function paidEndpointRefused(refusal: RequestError, unchecked: number): CliError {
  const status = refusal.status ?? 0;
  const kept = `${countOf(unchecked, 'address', 'addresses')} left unchecked; every row was written, unverified`;
  const message = `${refusal.message.replace(/\.$/, '')}. No further paid call was sent: ${kept}.`;
  if (status === 402) {
    return new CliError(
      message,
      ExitCode.auth,
      'Add verification credits to the account, then run again: results already paid for are kept and not paid again.',
    );
  }
  return new CliError(message, ExitCode.service, hintFor(status));
}

function hintFor(status: number): string {
  const set = (name: ContractSetting, value: string) => `\`prospect config set ${name} ${value}\``;
  if (status === 404) return `The service verifies at another path: set it with ${set(VERIFY_SETTINGS.path, 'PATH')}.`;
  if (status === 405) return `The service verifies with another method: ${set(VERIFY_SETTINGS.method, 'POST')}.`;
  if (status === 400)
    return (
      `The service names the address parameter otherwise: ${set(VERIFY_SETTINGS.param, 'NAME')} ` +
      `(or check ${VERIFY_SETTINGS.path}).`
    );
  const { path, method, param } = VERIFY_SETTINGS;
  return `Check how the service verifies an address: ${path}, ${method} and ${param} adapt the call.`;
}

/**
 * Words the service answered that no known vocabulary names: each address was written as `unknown`,
 * never `valid`, and kept in the ledger as paid; the words are shown, counted, with the setting.
 */
function unknownStatuses(words: ReadonlyMap<string, number>): CliError {
  const entries = [...words];
  const shown = entries
    .slice(0, 5)
    .map(([word, count]) => `"${displaySafe(word).slice(0, 40)}" ${formatCount(count)}`)
    .join(', ');
  const more = entries.length > 5 ? ` and ${countOf(entries.length - 5, 'other word')}` : '';
  const total = entries.reduce((sum, [, count]) => sum + count, 0);
  const first = displaySafe(entries[0]![0]).slice(0, 40).replace(/\s+/g, '_');
  return new CliError(
    `${countOf(total, 'verification')} answered with a status prospect does not know (${shown}${more}): ` +
      'written as unknown, never valid. The output is complete, its verdicts are not.',
    ExitCode.service,
    `Say what each word means with \`prospect config set ${VERIFY_SETTINGS.statuses} ${first}=risky\` ` +
      '(theirs=ours; ours valid, invalid, risky or unknown). The paid results are kept in the verification ' +
      'ledger with their words: a re-run within --cache-ttl reads them with the setting, without paying again.',
  );
}

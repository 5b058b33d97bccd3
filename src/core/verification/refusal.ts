/**
 * A verify endpoint that refused a paid call (contract rows 22-23, issue 42): the run keeps every
 * row, unchecked, and ends with this error once its output is written. 402 is the account's (exit
 * 4, as a plan is); any other 4xx means prospect and the service disagree on how to call it (exit 5),
 * and the settings that adapt the call are named.
 */
import type { ContractSetting, RequestError } from '../../api/index.js';
import { CliError, ExitCode } from '../../exit-codes.js';
import { countOf } from '../../ui/format-count.js';

/** The settings that say how the service is called for a verification, typed by the one list of them. */
const VERIFY_SETTINGS: Record<'path' | 'method' | 'param', ContractSetting> = {
  path: 'verify-path',
  method: 'verify-method',
  param: 'verify-param',
};

export function paidEndpointRefused(refusal: RequestError, unchecked: number): CliError {
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

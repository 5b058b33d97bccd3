/**
 * `prospect doctor` as a job (gh's runF): its flags, and the deps it is given instead of building them
 * (the connection, a transport for its own short-timeout client, the paid client of --verify, the
 * network steps it times, the settings a run lacks). A test gives it a route stub and stand-in steps.
 */
import { RETRY_DEFAULTS } from '../../api/index.js';
import { UsageError } from '../../exit-codes.js';
import type { DOCTOR_FLAGS } from '../../options/command-flags.js';
import type { FlagValues } from '../../options/flag.js';
import { missingSettings, type MissingSetting } from '../../runtime/connection.js';
import type { RunContext } from '../../runtime/context.js';
import { runtimeDeps, type JobDeps } from '../../runtime/job-deps.js';
import { displaySafe } from '../../util/display-safe.js';
import { checkStateStore } from '../state-store/doctor.js';
import { diagnose } from './diagnose.js';
import { NETWORK_STEPS, type NetworkSteps } from './probes.js';

export interface DoctorDeps extends JobDeps {
  /** Every setting a run needs and lacks (doctor names them all; a command stops at the first). */
  missingSettings(): Promise<MissingSetting[]>;
  /** DNS, TCP and TLS, each timed. */
  network: NetworkSteps;
}

export function doctorDeps(ctx: RunContext): DoctorDeps {
  return { ...runtimeDeps(ctx), missingSettings: () => missingSettings(ctx), network: NETWORK_STEPS };
}

export async function runDoctor(
  ctx: RunContext,
  flags: FlagValues<typeof DOCTOR_FLAGS>,
  deps: DoctorDeps,
): Promise<number> {
  // The paid check's parts are loaded only when asked for; a malformed address is exit 2 before any call.
  const verifyFlags = { verify: flags.verify, yes: flags.yes === true };
  const paid = flags.verify === undefined ? undefined : await import('./verify-check.js');
  const address = paid?.verifyAddressOf(verifyFlags);
  // What the service answered is in these lines: shown as text, never obeyed by the terminal.
  const out = { line: (text: string) => ctx.stdout.write(`${displaySafe(text)}\n`) };
  // Every missing setting gets its FAIL line, not only the first a command would stop at.
  const missing = await deps.missingSettings();
  for (const { setting, message, hint } of missing) out.line(`FAIL ${setting.padEnd(9)} ${message} ${hint}`);
  if (missing.length > 1) {
    throw new UsageError(
      `${missing.length} settings are missing: ${missing.map((m) => m.setting).join(' and ')}.`,
      'Set each as its FAIL line above says, or add --sandbox.',
    );
  }
  const connection = await deps.connection();
  const verifyCheck =
    address === undefined ? undefined : await paid?.prepareVerifyCheck(ctx, deps, connection, address, verifyFlags);
  // The state store (issue 35): local, or the team database's connection, TLS, privileges and schema.
  await checkStateStore(ctx, out);
  return diagnose(
    connection,
    out,
    {
      timeoutMs: ctx.global.timeout !== undefined ? ctx.global.timeout * 1000 : RETRY_DEFAULTS.timeoutMs,
      maxRetries: ctx.global.maxRetries ?? RETRY_DEFAULTS.maxRetries,
      signal: ctx.signal,
    },
    deps,
    verifyCheck,
  );
}

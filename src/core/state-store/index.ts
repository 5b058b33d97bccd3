/**
 * Which store keeps prospect's state: the local one (files and SQLite, as always) unless a state URL
 * is set (PROSPECT_STATE_URL, or `config set state-url`); then the team's PostgreSQL database, whose
 * driver is imported only then, so a start without one loads nothing more.
 */
import { hostname } from 'node:os';
import { settingOf } from '../../config/precedence.js';
import { parseStateUrl } from '../../config/state-url.js';
import { UsageError } from '../../exit-codes.js';
import type { RunContext } from '../../runtime/context.js';
import type { TeamStore } from './types.js';

export type { TeamStore };

/** The state URL in effect (src/config/precedence.ts); undefined when nothing sets one. */
export async function stateUrlSetting(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const { readConfigValues } = await import('../../config/store.js');
  return settingOf('state-url', { env, config: () => readConfigValues(env).stateUrl })?.value;
}

/**
 * The team key, which a state URL needs (exit 2 without it, before anything): the store keys what it
 * keeps with it. Never generated here: each machine would make its own, and find none of the others'.
 */
export async function teamKeySetting(env: NodeJS.ProcessEnv): Promise<string> {
  const [{ readConfigValues }, { parseTeamKey, refusal }] = await Promise.all([
    import('../../config/store.js'),
    import('../../config/validate.js'),
  ]);
  const fromEnv = (text: string) => {
    try {
      return parseTeamKey(text);
    } catch (error) {
      const { reason, hint } = refusal(error);
      throw new UsageError(`PROSPECT_TEAM_KEY: ${reason}.`, hint);
    }
  };
  const setting = settingOf('team-key', { env, fromEnv, config: () => readConfigValues(env).teamKey });
  if (setting !== undefined) return setting.value;
  throw new UsageError(
    'a state URL is set but no team key: the team database keeps addresses and leads only keyed with the ' +
      "team's shared key, which it never holds.",
    'Make one once (openssl rand -base64 32 | prospect config set team-key) and give the same key to every ' +
      'machine of the team, as PROSPECT_TEAM_KEY or with `prospect config set team-key` (docs/team.md).',
  );
}

/** This machine's name as the team sees it: HOSTNAME (a container's), else the system's. */
export function hostName(env: NodeJS.ProcessEnv): string {
  return env.HOSTNAME?.trim() || hostname();
}

const opened = new WeakMap<RunContext, Promise<TeamStore | undefined>>();

/** The team store of this run, connected once (closed when the run ends); undefined without a state URL. */
export function teamStore(ctx: RunContext): Promise<TeamStore | undefined> {
  let store = opened.get(ctx);
  if (!store) {
    store = connect(ctx);
    opened.set(ctx, store);
  }
  return store;
}

async function connect(ctx: RunContext): Promise<TeamStore | undefined> {
  const text = await stateUrlSetting(ctx.env);
  if (text === undefined) return undefined;
  const url = parseStateUrl(text);
  const teamKey = await teamKeySetting(ctx.env);
  const { openPgStore } = await import('./pg/store.js');
  const store = await openPgStore(url, hostName(ctx.env), teamKey);
  ctx.onCleanup(() => store.close());
  return store;
}

/** `--state pg:NAME`: the job name; undefined for a directory. */
export function remoteJobName(state: string): string | undefined {
  if (!state.startsWith('pg:')) return undefined;
  const name = state.slice(3);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(name))
    throw new UsageError(
      `--state ${state}: a job name is 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit.`,
    );
  return name;
}

/** The team store a `--state pg:NAME` needs: refused (exit 2) before anything when no state URL is set. */
export async function requireTeamStore(ctx: RunContext, state: string): Promise<TeamStore> {
  const store = await teamStore(ctx);
  if (store) return store;
  throw new UsageError(
    `--state ${state} keeps the job in the team database, but no state URL is set.`,
    'Set PROSPECT_STATE_URL, or run `prospect config set state-url postgresql://ROLE@HOST/DB` (docs/team.md).',
  );
}

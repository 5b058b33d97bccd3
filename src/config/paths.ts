import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * conf's defaults for projectName 'prospect': env-paths adds the suffix "-nodejs" to avoid clashing with native apps.
 */
const PROJECT_DIRECTORY = 'prospect-nodejs';
export const CONFIG_FILE_NAME = 'config.json';

/**
 * The directory that holds the config file: PROSPECT_CONFIG_DIR when set (tests, or a second profile), otherwise
 * conf's per-user location. Computed here so that reading the config, on every run, does not import conf; conf
 * is always given this directory as its `cwd`, so reader and writer cannot disagree.
 */
export function configDirectory(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  const override = env.PROSPECT_CONFIG_DIR?.trim();
  if (override) return resolve(override);
  return standardConfigDirectory(env, platform, home);
}

export function configFilePath(env: NodeJS.ProcessEnv): string {
  return join(configDirectory(env), CONFIG_FILE_NAME);
}

/** Mirrors env-paths 3 (what conf uses): XDG on Linux, Preferences on macOS, %APPDATA% on Windows. */
function standardConfigDirectory(env: NodeJS.ProcessEnv, platform: NodeJS.Platform, home: string): string {
  if (platform === 'darwin') return join(home, 'Library', 'Preferences', PROJECT_DIRECTORY);
  if (platform === 'win32') return join(env.APPDATA || join(home, 'AppData', 'Roaming'), PROJECT_DIRECTORY, 'Config');
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), PROJECT_DIRECTORY);
}

/** The user's cache directory: PROSPECT_CACHE_DIR, else $XDG_CACHE_HOME/prospect, else ~/.cache/prospect. */
export function cacheDirectory(env: NodeJS.ProcessEnv, home: string = homedir()): string {
  if (env.PROSPECT_CACHE_DIR) return env.PROSPECT_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(home, '.cache'), 'prospect');
}

/**
 * Where `--sandbox` and `prospect sandbox` keep generated datasets between runs: PROSPECT_SANDBOX_CACHE_DIR
 * (the test suite shares one across its runs), else `sandbox` in the cache directory.
 */
export function sandboxCacheDirectory(env: NodeJS.ProcessEnv): string {
  return env.PROSPECT_SANDBOX_CACHE_DIR || join(cacheDirectory(env), 'sandbox');
}

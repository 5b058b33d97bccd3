/**
 * The one order a setting is decided in: the flag, else the environment (the key's PROSPECT_
 * variable, CONFIG_KEY_SPECS), else the config file, else the default. Every reader of a setting
 * asks here, and says where the value came from as this module words it. (The proxy settings of the
 * system, HTTPS_PROXY and the rest, are not a layer: they are the proxy key's default, api/proxy.ts.)
 * A start-up module (README "Start-up").
 */
import { nonEmpty } from '../util/text.js';
import { CONFIG_KEY_SPECS, type ConfigKey } from './keys.js';

type SettingSource = 'flag' | 'environment' | 'config file' | 'default';

export interface Setting<T> {
  value: T;
  source: SettingSource;
  /** Where, as messages name it: `--base-url`, `PROSPECT_BASE_URL`, `base-url in the config file`, `default`. */
  where: string;
}

export interface SettingLayers<T> {
  /** The flag that sets it on this command line, and its value (undefined or blank: not given). */
  flag?: { name: string; value: T | undefined } | undefined;
  env: NodeJS.ProcessEnv;
  /**
   * The environment variable's text as a value: a check that throws refuses it, even when the flag
   * wins (as a bad config file stops a run whatever the flags say). Default: the trimmed text.
   */
  fromEnv?: (text: string) => T;
  /** The config file's checked value, read only when no flag or variable sets it. */
  config?: () => T | undefined;
  fallback?: T | undefined;
}

/** The setting in effect for `key`; undefined when no layer sets it. */
export function settingOf<T>(key: ConfigKey, layers: SettingLayers<T>): Setting<T> | undefined {
  const fromFlag = given(layers.flag?.value);
  const variable = CONFIG_KEY_SPECS[key].env;
  const text = variable === undefined ? undefined : nonEmpty(layers.env[variable]);
  const fromEnv = text === undefined ? undefined : layers.fromEnv ? layers.fromEnv(text) : (text as T);
  if (fromFlag !== undefined) return { value: fromFlag, source: 'flag', where: layers.flag!.name };
  if (fromEnv !== undefined) return { value: fromEnv, source: 'environment', where: variable! };
  const fromConfig = layers.config?.();
  if (fromConfig !== undefined) return { value: fromConfig, source: 'config file', where: `${key} in the config file` };
  if (layers.fallback !== undefined) return { value: layers.fallback, source: 'default', where: 'default' };
  return undefined;
}

/** A flag's value, trimmed; blank text counts as not given. */
function given<T>(value: T | undefined): T | undefined {
  return typeof value === 'string' ? (nonEmpty(value) as T | undefined) : value;
}

/**
 * The config file: a JSON object keyed by the names `prospect config` uses ("api-key", "max-age"...).
 * Reading happens on every run, so it is a plain readFileSync + JSON.parse; writing goes through
 * conf (atomic writes), imported only by `prospect config set|unset`.
 */
import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { assertOwnDirectory } from '../io/own-directory.js';
import type { z } from 'zod';
import { UsageError } from '../exit-codes.js';
import { isRecord } from '../util/is-record.js';
import { CONFIG_KEY_SPECS, type ConfigKey } from './keys.js';
import { ConfigFileSchema, issueRefusal } from './validate.js';
import { CONFIG_FILE_NAME, configFilePath } from './paths.js';

/** Values read from the config file, checked; a setting the file does not hold is absent or undefined. */
export type ConfigValues = Partial<z.output<typeof ConfigFileSchema>>;

export type RawConfig = Record<string, unknown>;

// The file holds a key: only its owner may read it, whatever the umask.
const PRIVATE_FILE_MODE = 0o600;
const PRIVATE_DIRECTORY_MODE = 0o700;

/**
 * The checked values of the config file named by `env` (PROSPECT_CONFIG_DIR or the per-user
 * location); {} when there is none. A corrupt file or an invalid value is a UsageError naming the
 * file: prospect never guesses around, or silently replaces, a file the user wrote.
 */
export function readConfigValues(env: NodeJS.ProcessEnv): ConfigValues {
  const path = configFilePath(env);
  const result = ConfigFileSchema.safeParse(readConfigFile(path));
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  throw invalidSettingError(path, String(issue?.path[0]) as ConfigKey, issueRefusal(issue));
}

/**
 * The file's JSON object as it is, unchecked; {} when the file does not exist. A file another user
 * could have written (its directory's or its own owner or mode) is refused: it could name any base-url.
 */
export function readConfigFile(path: string): RawConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return {};
    throw new UsageError(
      `cannot read the config file ${path} (${code ?? String(error)}).`,
      'Check its permissions, or point PROSPECT_CONFIG_DIR elsewhere.',
    );
  }
  assertOwnDirectory(dirname(path), `the config directory ${dirname(path)}`, [basename(path)]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw corruptFileError(path, `it is not valid JSON${whereParsingFailed(text, error)}`);
  }
  if (!isRecord(parsed)) {
    throw corruptFileError(path, 'it must hold one JSON object, e.g. {"max-age": "90d"}');
  }
  return parsed;
}

/**
 * " (line 3, column 14)", from the parser's position. Never the parser's message itself: newer V8
 * versions quote the text around the error, which could be part of the key.
 */
function whereParsingFailed(text: string, error: unknown): string {
  const position = /at position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
  if (position === undefined) return '';
  const before = text.slice(0, Number(position)).split('\n');
  return ` (line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1})`;
}

function corruptFileError(path: string, why: string): UsageError {
  return new UsageError(
    `the config file ${path} is unusable: ${why}.`,
    'Fix it in an editor, or delete it and set the values again with `prospect config set`; prospect leaves ' +
      'it as it is.',
  );
}

/** A UsageError naming the file and the key (never the value: it may be the secret). */
function invalidSettingError(
  path: string,
  key: ConfigKey,
  { reason, hint }: { reason: string; hint?: string | undefined },
): UsageError {
  const fix =
    `Fix it with \`prospect config set ${key}${CONFIG_KEY_SPECS[key].secret ? '' : ' VALUE'}\` or ` +
    `remove it with \`prospect config unset ${key}\`.`;
  return new UsageError(`the config file ${path} has an invalid ${key}: ${reason}.`, hint ? `${hint} ${fix}` : fix);
}

/** The writable side of the config file, through conf. */
export interface ConfigStore {
  readonly path: string;
  set(key: ConfigKey, value: string | number): void;
  /** False when the key was not set. */
  unset(key: ConfigKey): boolean;
}

/**
 * Opens the config file for writing. A corrupt file is reported (exit 2, with its path) rather than
 * cleared: conf would throw on it, or with clearInvalidConfig silently drop what the user wrote.
 */
export async function openConfigStore(env: NodeJS.ProcessEnv): Promise<ConfigStore> {
  const path = configFilePath(env);
  readConfigFile(path);
  ensurePrivateDirectory(dirname(path));
  // The key is about to be written there: never into a directory another user could read it from or swap.
  assertOwnDirectory(dirname(path), `the config directory ${dirname(path)}`, [basename(path)]);
  const { default: Conf } = await import('conf');
  let conf: InstanceType<typeof Conf>;
  try {
    conf = new Conf({
      projectName: 'prospect',
      cwd: dirname(path),
      configName: CONFIG_FILE_NAME.replace(/\.json$/, ''),
      configFileMode: PRIVATE_FILE_MODE,
      clearInvalidConfig: false,
      // Keys are flat ("max-age"); a dot in a key must not become nesting.
      accessPropertiesByDotNotation: false,
    });
  } catch {
    // The file changed between our check and conf's read (another process): still never a crash,
    // and not conf's message, which could quote the file.
    throw corruptFileError(path, 'conf could not read it');
  }
  return {
    path,
    set(key, value) {
      conf.set(key, value);
      makePrivate(path);
    },
    unset(key) {
      if (!conf.has(key)) return false;
      conf.delete(key);
      makePrivate(path);
      return true;
    },
  };
}

/**
 * conf's atomic write creates a new file with configFileMode (minus the umask), but its in-place fallbacks (Snap,
 * EXDEV) keep an older file's mode: chmod after every write.
 */
function makePrivate(path: string): void {
  if (process.platform !== 'win32') chmodSync(path, PRIVATE_FILE_MODE);
}

/** A directory we create is private too; an existing one is the user's choice and left alone. */
function ensurePrivateDirectory(directory: string): void {
  mkdirSync(directory, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
}

/**
 * The checks of config values, the same for `config set` and for what is found in the file. Each
 * returns what is stored and throws a UsageError saying why a value is refused.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { z } from 'zod';
import { checkBaseUrl, ClientOptionError, parseProxyUrl } from '../api/index.js';
import { readCaFile } from './ca-file.js';
import { parseStateUrlSetting } from './state-url.js';
import { CliError, UsageError } from '../exit-codes.js';
import { parseMaxAge } from '../io/max-age.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../io/writers.js';
import { concurrencyValue, maxAnswerSizeValue, verifyBudgetValue } from '../options/values.js';
import type { ConfigKey } from './keys.js';

const PARSERS = {
  'api-key': parseApiKey,
  'base-url': parseBaseUrl,
  proxy: parseProxySetting,
  'ca-file': parseCaFilePath,
  'cursor-param': parseCursorParam,
  'max-age': parseMaxAgeSetting,
  concurrency: parseConcurrency,
  format: parseFormat,
  'verify-budget': parseVerifyBudget,
  'max-answer-size': parseMaxAnswerSize,
  'exclude-domains': parseListPath,
  'exclude-emails': parseListPath,
  'state-url': parseStateUrlSetting,
  'team-key': parseTeamKey,
} satisfies Record<ConfigKey, (text: string) => string | number>;

/**
 * A value given to `config set`: checked as a stored one is, and a list file must exist now (its absolute path is
 * kept).
 */
export function parseConfigValue(key: ConfigKey, text: string): string | number {
  const value = PARSERS[key](text);
  if (key === 'ca-file') readCaFile(String(value), 'ca-file');
  if ((key === 'exclude-domains' || key === 'exclude-emails') && !existsSync(String(value))) {
    throw new UsageError(
      `${String(value)} does not exist`,
      `Give the path of the ${key === 'exclude-domains' ? 'domain' : 'address'} list (a CRM export CSV, a ` +
        `plain list or JSON).`,
    );
  }
  return value;
}

/**
 * A value as found in the file, checked as `config set` checks it. A hand-edited file may hold 8
 * for "8"; null is the same as no value. A refusal is an issue with the reason and its hint.
 */
function storedSetting<T>(parse: (text: string) => T) {
  return z
    .union([z.string(), z.number()], { error: (issue) => `expected a string, found ${kindOf(issue.input)}` })
    .nullish()
    .transform((stored, ctx) => {
      if (stored === null || stored === undefined) return undefined;
      try {
        return parse(String(stored));
      } catch (error) {
        const { reason, hint } = refusal(error);
        ctx.addIssue({ code: 'custom', message: reason, params: { hint } });
        return z.NEVER;
      }
    });
}

function kindOf(value: unknown): string {
  return Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value;
}

/** The file's settings by their `prospect config` names; other keys are ignored. */
const StoredSettingsSchema = z.object({
  'api-key': storedSetting(PARSERS['api-key']),
  'base-url': storedSetting(PARSERS['base-url']),
  proxy: storedSetting(PARSERS.proxy),
  'ca-file': storedSetting(PARSERS['ca-file']),
  'cursor-param': storedSetting(PARSERS['cursor-param']),
  'max-age': storedSetting(PARSERS['max-age']),
  concurrency: storedSetting(PARSERS.concurrency),
  format: storedSetting(PARSERS.format),
  'verify-budget': storedSetting(PARSERS['verify-budget']),
  'max-answer-size': storedSetting(PARSERS['max-answer-size']),
  'exclude-domains': storedSetting(PARSERS['exclude-domains']),
  'exclude-emails': storedSetting(PARSERS['exclude-emails']),
  'state-url': storedSetting(PARSERS['state-url']),
  'team-key': storedSetting(PARSERS['team-key']),
});

/** The config file as a run uses it: each setting under the name of the flag it defaults (--max-age → maxAge). */
export const ConfigFileSchema = StoredSettingsSchema.transform((stored) => ({
  apiKey: stored['api-key'],
  baseUrl: stored['base-url'],
  proxy: stored.proxy,
  caFile: stored['ca-file'],
  cursorParam: stored['cursor-param'],
  maxAge: stored['max-age'],
  concurrency: stored.concurrency,
  format: stored.format,
  verifyBudget: stored['verify-budget'],
  maxAnswerSize: stored['max-answer-size'],
  excludeDomains: stored['exclude-domains'],
  excludeEmails: stored['exclude-emails'],
  stateUrl: stored['state-url'],
  teamKey: stored['team-key'],
}));

/** Why a stored value is refused, with the fix's hint; undefined when it is fine. */
export function storedValueProblem(key: ConfigKey, stored: unknown): { reason: string; hint?: string } | undefined {
  const result = StoredSettingsSchema.shape[key].safeParse(stored);
  return result.success ? undefined : issueRefusal(result.error.issues[0]);
}

export function issueRefusal(issue: z.core.$ZodIssue | undefined): { reason: string; hint?: string } {
  const hint = issue?.code === 'custom' ? (issue.params?.['hint'] as string | undefined) : undefined;
  return { reason: issue?.message ?? 'invalid value', hint };
}

/** The reason a value was refused, with its hint, whatever kind of error the check threw. */
export function refusal(error: unknown): { reason: string; hint?: string } {
  if (error instanceof CliError || error instanceof ClientOptionError)
    return { reason: error.message.replace(/\.$/, ''), hint: error.hint };
  return { reason: error instanceof Error ? error.message : String(error) };
}

function parseApiKey(text: string): string {
  const key = text.trim();
  if (key === '') throw new UsageError('the API key is empty');
  // Never echo the key in a message: it could end up in a log.
  if (/[\s\u0000-\u001f\u007f]/.test(key)) {
    throw new UsageError(
      'the API key contains spaces or control characters',
      'Check for a stray newline or space when it was pasted.',
    );
  }
  return key;
}

/** The team key: long enough that the database's hashes cannot be tried against guesses of it. */
export function parseTeamKey(text: string): string {
  const key = text.trim();
  // Never echo the key in a message: it could end up in a log.
  if (/[\s\u0000-\u001f\u007f]/.test(key))
    throw new UsageError('the team key contains spaces or control characters', 'Check for a stray newline or space.');
  if (key.length < 32)
    throw new UsageError(
      `the team key has ${key.length} characters, fewer than 32`,
      'Make one with `openssl rand -base64 32` and give the same to every machine of the team.',
    );
  return key;
}

function parseBaseUrl(text: string): string {
  checkBaseUrl(text);
  return text.trim();
}

/** Kept as written (its password too): the file is private, and messages never show it (describeProxy). */
function parseProxySetting(text: string): string {
  parseProxyUrl(text, 'the proxy setting');
  return text.trim();
}

/**
 * Absolute, so a cron job in another directory finds it; whether it is readable PEM is checked by `config set` and
 * every run.
 */
function parseCaFilePath(text: string): string {
  const path = text.trim();
  if (path === '') throw new UsageError('the path is empty');
  return resolve(path);
}

function parseCursorParam(text: string): string {
  const name = text.trim();
  // A query parameter name the client puts in the URL as is: keep it to characters that need no escaping.
  if (!/^[A-Za-z0-9_.~-]+$/.test(name)) {
    throw new UsageError(
      `"${name}" is not a usable query parameter name`,
      'Use letters, digits, "_", "-", "." or "~", e.g. cursor or page_token.',
    );
  }
  return name;
}

function parseMaxAgeSetting(text: string): string {
  const result = parseMaxAge(text, new Date());
  if (!result.ok) throw new UsageError(result.reason);
  return text.trim();
}

const checkConcurrency = concurrencyValue('concurrency');
const checkVerifyBudget = verifyBudgetValue('verify-budget');

function parseConcurrency(text: string): number {
  return asUsageError(() => checkConcurrency(text));
}

function parseVerifyBudget(text: string): number {
  return asUsageError(() => checkVerifyBudget(text));
}

const checkMaxAnswerSize = maxAnswerSizeValue('max-answer-size');

/** Exported for PROSPECT_MAX_ANSWER_SIZE, which src/runtime/connection.ts checks the same way. */
export function parseMaxAnswerSize(text: string): number {
  return asUsageError(() => checkMaxAnswerSize(text));
}

/** commander's argument errors, in the words of a config refusal. */
function asUsageError<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw new UsageError(error.message.replace(/\.$/, ''));
    throw error;
  }
}

/**
 * An exclusion list's path, made absolute so a cron job in another directory finds it. Whether it
 * exists is checked by `config set` and by every run (src/core/shared/exclusion.ts), not on reading the
 * file: a vanished list must stop the runs that use it, not `config unset`.
 */
function parseListPath(text: string): string {
  const path = text.trim();
  if (path === '') throw new UsageError('the path is empty');
  return resolve(path);
}

function parseFormat(text: string): OutputFormat {
  const format = text.trim().toLowerCase();
  if (!(OUTPUT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`unknown format "${text.trim()}"`, `Formats are: ${OUTPUT_FORMATS.join(', ')}.`);
  }
  return format as OutputFormat;
}

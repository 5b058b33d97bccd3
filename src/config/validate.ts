/**
 * The checks of config values, the same for `config set` and for what is found in the file. Each
 * returns what is stored and throws a UsageError saying why a value is refused.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { z } from 'zod';
import {
  checkApiKey,
  checkBaseUrl,
  ClientOptionError,
  CONTACT_FIELD_NAMES,
  MAX_COMPANIES_PER_PAGE,
  parseProxyUrl,
  VERDICTS,
  type ContractSetting,
} from '../api/index.js';
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
  paging: choiceOf('paging', ['cursor', 'offset']),
  'offset-param': parseCursorParam,
  'page-size-param': parseCursorParam,
  'page-size-max': parsePageSizeMax,
  'contact-fields': parseContactFields,
  'date-format': choiceOf('date-format', ['iso', 'dmy', 'mdy']),
  'verify-path': parseVerifyPath,
  'verify-method': (text) => choiceOf('verify-method', ['GET', 'POST'])(text.toUpperCase()),
  'verify-param': parseCursorParam,
  'verify-statuses': parseVerifyStatuses,
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
  paging: storedSetting(PARSERS.paging),
  'offset-param': storedSetting(PARSERS['offset-param']),
  'page-size-param': storedSetting(PARSERS['page-size-param']),
  'page-size-max': storedSetting(PARSERS['page-size-max']),
  'contact-fields': storedSetting(PARSERS['contact-fields']),
  'date-format': storedSetting(PARSERS['date-format']),
  'verify-path': storedSetting(PARSERS['verify-path']),
  'verify-method': storedSetting(PARSERS['verify-method']),
  'verify-param': storedSetting(PARSERS['verify-param']),
  'verify-statuses': storedSetting(PARSERS['verify-statuses']),
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
  paging: stored.paging,
  offsetParam: stored['offset-param'],
  pageSizeParam: stored['page-size-param'],
  pageSizeMax: stored['page-size-max'],
  contactFields: stored['contact-fields'],
  dateFormat: stored['date-format'],
  verifyPath: stored['verify-path'],
  verifyMethod: stored['verify-method'],
  verifyParam: stored['verify-param'],
  verifyStatuses: stored['verify-statuses'],
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
  checkApiKey(key);
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

/** One of a few words, as written in the list. */
function choiceOf(key: string, choices: readonly string[]): (text: string) => string {
  return (text) => {
    const value = text.trim();
    const found = choices.find((choice) => choice.toLowerCase() === value.toLowerCase());
    if (found === undefined) throw new UsageError(`${key} must be ${choices.join(' or ')} (got "${value}")`);
    return found;
  };
}

function parsePageSizeMax(text: string): number {
  const value = text.trim();
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_COMPANIES_PER_PAGE)
    throw new UsageError(`page-size-max must be an integer from 1 to ${MAX_COMPANIES_PER_PAGE} (got "${value}")`);
  return Number(value);
}

function parseVerifyPath(text: string): string {
  const path = text.trim();
  if (!/^\/[A-Za-z0-9_.~\-/]*$/.test(path) || path.includes('//'))
    throw new UsageError(`"${path}" is not a usable path`, 'Give the path from the service root, e.g. /api/v1/verify.');
  return path;
}

/** `a=b,c=d` → [[a, b], [c, d]]; names as a query parameter's, each side once. */
export function pairsOf(text: string, key: string): Array<[string, string]> {
  const pairs = text
    .split(',')
    .map((pair) => pair.trim())
    .filter((pair) => pair !== '')
    .map((pair) => {
      const parts = pair.split('=').map((part) => part.trim());
      if (parts.length !== 2 || !parts.every((part) => /^[A-Za-z0-9_.~-]+$/.test(part)))
        throw new UsageError(`${key}: "${pair}" is not a NAME=NAME pair`, 'Pairs are separated by commas: a=b,c=d.');
      return [parts[0]!, parts[1]!] as [string, string];
    });
  if (pairs.length === 0) throw new UsageError(`${key} is empty`, 'Give NAME=NAME pairs separated by commas.');
  if (new Set(pairs.map(([left]) => left)).size !== pairs.length)
    throw new UsageError(`${key} names the same field twice`);
  return pairs;
}

function parseContactFields(text: string): string {
  const pairs = pairsOf(text, 'contact-fields');
  const unknown = pairs.find(([ours]) => !(CONTACT_FIELD_NAMES as readonly string[]).includes(ours));
  if (unknown !== undefined)
    throw new UsageError(
      `contact-fields: "${unknown[0]}" is not one of prospect's contact fields`,
      `Pairs are ours=theirs; ours is one of ${CONTACT_FIELD_NAMES.join(', ')}.`,
    );
  return pairs.map((pair) => pair.join('=')).join(',');
}

function parseVerifyStatuses(text: string): string {
  const pairs = pairsOf(text, 'verify-statuses');
  const bad = pairs.find(([, ours]) => !(VERDICTS as readonly string[]).includes(ours.toLowerCase()));
  if (bad !== undefined)
    throw new UsageError(
      `verify-statuses: "${bad[1]}" is not one of valid, invalid, risky, unknown`,
      'Pairs are theirs=ours, e.g. accept_all=risky.',
    );
  return pairs.map(([theirs, ours]) => `${theirs}=${ours.toLowerCase()}`).join(',');
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

/**
 * A contract setting's text as the environment gives it, checked as `config set` checks it: the
 * stored value (`PROSPECT_PAGING=Offset` → `offset`). Exported for src/runtime/connection.ts.
 */
export function parseContractSetting(key: ContractSetting, text: string): string | number {
  return PARSERS[key](text);
}

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

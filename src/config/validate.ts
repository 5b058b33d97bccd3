/**
 * The checks of config values, the same for `config set` and for what is found in the file. Each
 * returns what is stored and throws a UsageError saying why a value is refused.
 */
import { InvalidArgumentError } from 'commander';
import { checkBaseUrl, ClientOptionError } from '../api/index.js';
import { integerInRange } from '../commands/options.js';
import { CliError, UsageError } from '../exit-codes.js';
import { parseMaxAge } from '../io/max-age.js';
import { OUTPUT_FORMATS } from '../io/writers.js';
import type { ConfigKey } from './keys.js';

const PARSERS: Readonly<Record<ConfigKey, (text: string) => string | number>> = {
  'api-key': parseApiKey,
  'base-url': parseBaseUrl,
  'cursor-param': parseCursorParam,
  'max-age': parseMaxAgeSetting,
  concurrency: parseConcurrency,
  format: parseFormat,
};

export function parseConfigValue(key: ConfigKey, text: string): string | number {
  return PARSERS[key](text);
}

/** The reason a value was refused, with its hint, whatever kind of error the check threw. */
export function refusal(error: unknown): { reason: string; hint?: string } {
  if (error instanceof CliError || error instanceof ClientOptionError) return { reason: error.message.replace(/\.$/, ''), ...(error.hint ? { hint: error.hint } : {}) };
  return { reason: error instanceof Error ? error.message : String(error) };
}

function parseApiKey(text: string): string {
  const key = text.trim();
  if (key === '') throw new UsageError('the API key is empty');
  // Never echo the key in a message: it could end up in a log.
  if (/[\s\u0000-\u001f\u007f]/.test(key)) {
    throw new UsageError('the API key contains spaces or control characters', 'Check for a stray newline or space when it was pasted.');
  }
  return key;
}

function parseBaseUrl(text: string): string {
  checkBaseUrl(text);
  return text.trim();
}

function parseCursorParam(text: string): string {
  const name = text.trim();
  // A query parameter name the client puts in the URL as is: keep it to characters that need no escaping.
  if (!/^[A-Za-z0-9_.~-]+$/.test(name)) {
    throw new UsageError(`"${name}" is not a usable query parameter name`, 'Use letters, digits, "_", "-", "." or "~", e.g. cursor or page_token.');
  }
  return name;
}

function parseMaxAgeSetting(text: string): string {
  const result = parseMaxAge(text, new Date());
  if (!result.ok) throw new UsageError(result.reason);
  return text.trim();
}

const checkConcurrency = integerInRange('concurrency', 1, 32);

function parseConcurrency(text: string): number {
  try {
    return checkConcurrency(text);
  } catch (error) {
    if (error instanceof InvalidArgumentError) throw new UsageError(error.message.replace(/\.$/, ''));
    throw error;
  }
}

function parseFormat(text: string): string {
  const format = text.trim().toLowerCase();
  if (!(OUTPUT_FORMATS as readonly string[]).includes(format)) {
    throw new UsageError(`unknown format "${text.trim()}"`, `Formats are: ${OUTPUT_FORMATS.join(', ')}.`);
  }
  return format;
}

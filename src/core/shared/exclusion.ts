/**
 * Exclusion lists: the companies (--exclude-domains FILE) and people (--exclude-emails FILE) that
 * must never reach an export - customers, open deals, do-not-contact requests. Each file is read like
 * any domain or address input (a CRM export CSV with a Website or Email column, a plain list, JSON);
 * a domain matches after the input's own normalisation (URL, www., case), an address case-insensitively.
 * A job asks its predicate where an entry is accepted, so an excluded domain is never sent to the
 * service and an excluded address never verified; the counts go to the run record and one caveat a kind.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../../exit-codes.js';
import { normalizeDomain } from '../../io/domains.js';
import { checkEmailSyntax, emailKey } from '../../io/emails.js';
import {
  domainEntries,
  emailEntries,
  formatInvalidEntry,
  streamEntries,
  type EntryCollector,
} from '../../io/input/entries.js';
import type { EntryKind } from '../../io/input/model.js';
import { openInputStream } from '../../io/input/source.js';
import type { RunContext } from '../../runtime/context.js';
import { countOf } from '../../ui/format-count.js';
import { failOnInputProblems } from './input.js';

/** The flags, repeatable: every file given adds to the list. */
export interface ExclusionFlags {
  excludeDomains?: string[];
  excludeEmails?: string[];
}

/** The standing lists of `prospect config set exclude-domains|exclude-emails FILE`. */
interface StandingLists {
  excludeDomains?: string;
  excludeEmails?: string;
}

/** What one kind of list did in a run: its files, its entries, and how many rows it kept out. */
interface ListRecord {
  files: string[];
  entries: number;
  removed: number;
}

/** Counts a job keeps itself, in place of the lists' own. */
export interface Removed {
  domains?: number;
  emails?: number;
  suppressed?: number;
}

export interface ExclusionRecord {
  domains: ListRecord | null;
  emails: ListRecord | null;
  /** `prospect forget`'s standing suppressions: how many there are, and how many rows they kept out. */
  suppressed: { entries: number; removed: number } | null;
}

/**
 * The addresses `prospect forget` keeps out for good (src/core/suppression/), loaded by the job before
 * any call: an address on it is treated as on --exclude-emails, and counted apart.
 */
export interface SuppressionCheck {
  /** How many addresses are suppressed; 0 for none. */
  readonly entries: number;
  /** `emailKey`: the address as io/emails.ts emailKey gives it. */
  suppresses(emailKey: string): boolean;
}

/**
 * One kind of list: its entries' keys as the input reader keeps them (a 64-bit hash each, SeenKeys),
 * so a list of millions costs a hash an entry, never its text. A key that is not on the list but shares all 64 bits
 * with one that is (odds about n·m / 2^64 for m lookups) would be kept out and counted as removed.
 */
class ExclusionList {
  removed = 0;
  constructor(
    readonly files: string[],
    private readonly entries: EntryCollector,
  ) {}

  /** True when the key is on the list; each counted hit is one row kept out. */
  hit(key: string | undefined, count = true): boolean {
    if (key === undefined || !this.entries.hasKey(key)) return false;
    if (count) this.removed += 1;
    return true;
  }

  record(removed = this.removed): ListRecord {
    return { files: this.files, entries: this.entries.accepted, removed };
  }
}

/** The lists in force for one run; `undefined` lists mean the command has none of that kind. */
export class Exclusions {
  private suppressedCount = 0;

  private constructor(
    private readonly domains: ExclusionList | undefined,
    private readonly emails: ExclusionList | undefined,
    /** Undefined with no suppression at all, so a run without one keeps its record as it was. */
    private readonly suppression: SuppressionCheck | undefined,
  ) {}

  /**
   * Reads every list before any call: a file that cannot be read (a row, its encoding, its column),
   * or that yields no entry, stops the run with exit 2. `kinds` says which lists the command takes
   * (verify has no domains). `suppression`: the standing suppressions, for a command with addresses.
   */
  static async load(
    ctx: RunContext,
    flags: ExclusionFlags,
    kinds: { domains: boolean; emails: boolean },
    suppression?: SuppressionCheck,
  ): Promise<Exclusions> {
    const standing = kinds.domains || kinds.emails ? await standingLists(ctx) : {};
    const domainFiles = kinds.domains ? withStanding(flags.excludeDomains, standing.excludeDomains) : [];
    const emailFiles = kinds.emails ? withStanding(flags.excludeEmails, standing.excludeEmails) : [];
    const domains =
      domainFiles.length > 0 ? new ExclusionList(domainFiles, await readList(domainFiles, 'domain')) : undefined;
    const emails =
      emailFiles.length > 0 ? new ExclusionList(emailFiles, await readList(emailFiles, 'email')) : undefined;
    const suppressing = kinds.emails && suppression !== undefined && suppression.entries > 0;
    return new Exclusions(domains, emails, suppressing ? suppression : undefined);
  }

  /** No list at all: the run's parameters and fingerprint stay what they were before lists existed. */
  get active(): boolean {
    return this.domains !== undefined || this.emails !== undefined;
  }

  /** False for a company on --exclude-domains (counted as removed): it is neither sent nor written. */
  keepsDomain(domain: string): boolean {
    if (this.domains === undefined) return true;
    const normalized = normalizeDomain(domain);
    return !this.domains.hit(normalized.ok ? normalized.domain : undefined);
  }

  /**
   * False for an address on --exclude-emails (counted as removed unless `count` is false, for a
   * second reading of rows already counted): it is neither verified nor written.
   */
  keepsEmail(email: string | null | undefined, count = true): boolean {
    if (!this.checksEmails || email === null || email === undefined || email.trim() === '') return true;
    const checked = checkEmailSyntax(email);
    const key = emailKey(checked.ok ? checked.email : email);
    if (this.suppression?.suppresses(key)) {
      if (count) this.suppressedCount += 1;
      return false;
    }
    return this.emails === undefined || !this.emails.hit(key, count);
  }

  private get checksEmails(): boolean {
    return this.emails !== undefined || this.suppression !== undefined;
  }

  /** Rows each list (and the suppressions) kept out so far (0 for a list not in force). */
  get removed(): { domains: number; emails: number; suppressed: number } {
    return {
      domains: this.domains?.removed ?? 0,
      emails: this.emails?.removed ?? 0,
      suppressed: this.suppressedCount,
    };
  }

  /** The contacts whose address is neither excluded nor suppressed (a contact without an address is kept). */
  keepContacts<T extends { business_email?: string | null | undefined }>(contacts: T[]): T[] {
    return this.checksEmails ? contacts.filter((contact) => this.keepsEmail(contact.business_email)) : contacts;
  }

  /**
   * The run record's `excluded` field, the same shape on every command. `removed` overrides the
   * counts where the job keeps them itself (a pipeline counts committed output, so a resume is exact).
   */
  record(removed: Removed = {}): ExclusionRecord {
    return {
      domains: this.domains?.record(removed.domains) ?? null,
      emails: this.emails?.record(removed.emails) ?? null,
      suppressed: this.suppression
        ? { entries: this.suppression.entries, removed: removed.suppressed ?? this.suppressedCount }
        : null,
    };
  }

  /** What the run's parameters (and a pipeline's fingerprint) say about the lists: the files, nothing when none. */
  parameters(): Record<string, string[]> {
    return {
      ...(this.domains ? { exclude_domains: this.domains.files } : {}),
      ...(this.emails ? { exclude_emails: this.emails.files } : {}),
    };
  }

  /** One caveat line a kind of list in force: what it kept out of this output. */
  report(
    ctx: RunContext,
    nouns: { domains?: [string, string]; emails?: [string, string] } = {},
    removed: Removed = {},
  ): void {
    const [company, companies] = nouns.domains ?? ['company', 'companies'];
    const [contact, contacts] = nouns.emails ?? ['contact', 'contacts'];
    if (this.domains)
      ctx.reporter.caveat(
        `${countOf(removed.domains ?? this.domains.removed, company, companies)} removed by --exclude-domains.`,
      );
    if (this.emails)
      ctx.reporter.caveat(
        `${countOf(removed.emails ?? this.emails.removed, contact, contacts)} removed by --exclude-emails.`,
      );
    // A summary line, not a caveat: a standing suppression doing its work is no news for a cron job's mail.
    if (this.suppression)
      ctx.reporter.info(
        `Suppressed (prospect forget): ${countOf(removed.suppressed ?? this.suppressedCount, contact, contacts)}.`,
      );
  }
}

/**
 * The config's standing files, each checked to exist: a cron job whose list vanished must stop, not
 * export customers.
 */
async function standingLists(ctx: RunContext): Promise<StandingLists> {
  const { readConfigValues } = await import('../../config/store.js');
  const values = readConfigValues(ctx.env);
  const lists: StandingLists = { excludeDomains: values.excludeDomains, excludeEmails: values.excludeEmails };
  for (const [key, file] of [
    ['exclude-domains', lists.excludeDomains],
    ['exclude-emails', lists.excludeEmails],
  ] as const) {
    if (file !== undefined && !existsSync(file)) {
      throw new UsageError(
        `the standing ${key} list ${file} (prospect config) does not exist; nothing was sent.`,
        `Restore the file, point the setting at the new one (prospect config set ${key} FILE), ` +
          `or drop it (prospect config unset ${key}).`,
      );
    }
  }
  return lists;
}

/** The standing file first, then the flags' files, each once. */
function withStanding(files: string[] | undefined, standing: string | undefined): string[] {
  const all = [...(standing === undefined ? [] : [standing]), ...(files ?? [])];
  return [...new Set(all.map((file) => resolve(file)))];
}

/**
 * Every file's entries, read as they stream in (a list of any size is never held as text), each
 * once across the files: normalised domains, or addresses keyed case-insensitively. The entry column
 * is the first of EXPORT_COLUMNS the file has, so a CRM export needs no --column. A list is a
 * promise to keep people out: a file that yields no entry (a failed export: empty, or a header
 * alone) or has a row that cannot be read stops the run with exit 2, before any call.
 */
async function readList(
  files: readonly string[],
  kind: EntryKind,
  flag = kind === 'domain' ? '--exclude-domains' : '--exclude-emails',
  onEntry: (entry: string) => void = () => {},
): Promise<EntryCollector> {
  const entries = kind === 'domain' ? domainEntries({ kept: 5 }) : emailEntries({ kept: 5 });
  for (const file of files) {
    const source = openInputStream({ file });
    if (source === null)
      throw new UsageError(`${file}: an exclusion list is read from a file, not from standard input.`);
    const before = { read: entries.accepted + entries.duplicates, invalid: entries.invalidCount };
    for await (const entry of streamEntries(source.open(), { kind, origin: file }, entries)) onEntry(entry);
    failOnInputProblems(entries.problems, file, entries.problemCount);
    const invalid = entries.invalidCount - before.invalid;
    if (invalid > 0) {
      const shown = entries.invalid.slice(0, 3); // the earlier files had none: these are this file's
      const listed = shown.map((entry) => formatInvalidEntry(entry, kind)).join('; ');
      throw new UsageError(
        `${flag} ${file}: ${countOf(invalid, 'row', 'rows')} cannot be read as ` +
          `${kind === 'domain' ? 'a domain' : 'an address'} (${listed}${invalid > shown.length ? '; ...' : ''}); ` +
          'nothing was sent.',
        'A row that cannot be read keeps nobody out: fix or remove it, then run again.',
      );
    }
    if (entries.accepted + entries.duplicates === before.read) {
      const why =
        entries.blanks > 0 || entries.inputFormat !== 'lines' ? 'only a header or blank cells' : 'the file is empty';
      throw new UsageError(
        `${flag} ${file} holds no ${kind === 'domain' ? 'domain' : 'address'} (${why}); nothing was sent.`,
        'An empty list keeps nobody out: a CRM export that failed? Export it again, or leave the flag out.',
      );
    }
  }
  return entries;
}

/**
 * The addresses of files read as --exclude-emails reads them (any CRM export, each address once,
 * every problem exit 2), for `prospect forget --file`: each given to `onAddress` as it is read.
 */
export async function readAddressFiles(
  files: readonly string[],
  flag: string,
  onAddress: (address: string) => void,
): Promise<void> {
  await readList(
    files.map((file) => resolve(file)),
    'email',
    flag,
    onAddress,
  );
}

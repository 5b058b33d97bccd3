import { SENIORITIES, type Contact, type ContactsMeta, type Seniority } from '../../api/index.js';
import type { SeniorityOrder } from './proofs.js';
import { ContactSizing, MAX_DOMAINS_PER_CALL } from './sizing.js';

/** The service's largest `limit` (spec §4.2). */
export const MAX_CONTACTS_PER_CALL = 1000;

type Source = ContactsMeta['source'] | undefined;

/** A domain's contacts once every asked seniority is known: the service's order, seniority by seniority. */
export interface Resolved {
  contacts: Contact[];
  truncated: boolean;
  source: Source;
}

/** One contacts call: these domains, the seniorities `wanted[from..to]`, at most `limit` rows. */
interface Call {
  work: Work[];
  from: number;
  to: number;
  limit: number;
}

export type Ask = (
  domains: string[],
  limit: number,
  seniorities: readonly Seniority[],
) => Promise<{ data: Contact[]; meta?: { source?: Source } }>;

/** What is known of one domain of a batch while its seniorities are asked, most senior first. */
class Work {
  /** `wanted[from..]` are still to ask; those above are in `kept`, whole. */
  from = 0;
  kept: Contact[] = [];
  truncated = false;
  source: Source;
  busy = false;
  /** The most domains a call for it may carry: halved by each full answer that proved nothing. */
  peers = MAX_DOMAINS_PER_CALL;
  /** Rows of seniority `wanted[from]` that a cut answer showed: it has at least that many there. */
  atLeast = 0;
  /** A service out of order answered it full alone: it is asked one seniority a call. */
  oneSeniority = false;

  constructor(
    readonly domain: string,
    /** Contacts expected of it at every seniority, where the caller knows (the service's count of its kind). */
    readonly prior: number | undefined,
    readonly done: () => void,
  ) {}
}

/**
 * Plans the contacts calls of every batch in flight together, so that what the full answers of one batch
 * left is asked together with what other batches left, each call packed close to the limit at the
 * contacts per domain learned so far (sizing.ts) without filling it. A full answer keeps what the
 * seniority order proves (proofs.ts). Only the number of calls depends on the planning, never the
 * contacts a domain ends with.
 */
export class ContactScheduler {
  private readonly work: Work[] = [];
  private active = 0;

  constructor(
    private readonly ask: Ask,
    private readonly wanted: readonly Seniority[],
    private readonly order: SeniorityOrder,
    private readonly sizing: ContactSizing,
    private readonly limit: number,
    private readonly concurrency: number,
  ) {}

  /** Every contact of these (distinct) domains, once all their seniorities are known. */
  async resolve(domains: string[], priorOf?: (domain: string) => number | undefined): Promise<Map<string, Resolved>> {
    const works = await new Promise<Work[]>((resolve, reject) => {
      if (this.error !== undefined) return reject(this.error);
      let left = domains.length;
      const works = domains.map(
        (domain) =>
          new Work(domain, priorOf?.(domain), () => {
            if (--left > 0) return;
            this.waiting.delete(reject);
            resolve(works);
          }),
      );
      if (left === 0) return resolve(works);
      this.waiting.add(reject);
      this.work.push(...works);
      this.pump();
    });
    return new Map(works.map((w) => [w.domain, { contacts: w.kept, truncated: w.truncated, source: w.source }]));
  }

  /** The batches not yet resolved: a failed call fails them all (the run stops). */
  private readonly waiting = new Set<(error: unknown) => void>();
  private error: unknown;

  private fail(error: unknown): void {
    this.error ??= error;
    for (const reject of this.waiting) reject(this.error);
    this.waiting.clear();
  }

  /** Starts calls while slots are free and a domain waits. */
  private pump(): void {
    while (this.active < this.concurrency && this.error === undefined) {
      const call = this.plan();
      if (call === undefined) return;
      for (const w of call.work) w.busy = true;
      this.active += 1;
      this.run(call).then(
        () => {
          this.active -= 1;
          this.pump();
        },
        (error: unknown) => this.fail(error),
      );
    }
  }

  private async run(call: Call): Promise<void> {
    const seniorities = this.wanted.slice(call.from, call.to + 1);
    const domains = call.work.map((w) => w.domain);
    const { data, meta } = await this.ask(domains, call.limit, seniorities);
    this.order.check(data, seniorities);
    const grouped = groupByDomain(domains, data);
    for (const w of call.work) {
      w.busy = false;
      w.source ??= meta?.source;
    }
    if (data.length < call.limit) {
      this.sizing.learn(domains.length, seniorities, data);
      for (const w of call.work) this.keep(w, grouped.get(w.domain)!, call.to + 1);
      return;
    }
    const proven = this.order.provenBy(data, seniorities);
    if (proven === undefined) return this.splitUnordered(call, grouped);
    const cutIn = seniorities[proven.length]!;
    const cutRows = data.filter((row) => row.seniority === cutIn);
    this.sizing.learnCut(domains.length, cutIn, cutRows.length);
    if (proven.length === 0 && domains.length === 1) {
      // The most senior seniority asked fills the largest call alone: the domain is cut there.
      const w = call.work[0]!;
      w.truncated = true;
      return this.keep(w, data, call.from + 1);
    }
    const kept = data.filter((row) => proven.includes(row.seniority!));
    this.sizing.learn(domains.length, proven, kept);
    const keptByDomain = groupByDomain(domains, kept);
    const cutByDomain = groupByDomain(domains, cutRows);
    for (const w of call.work) {
      this.keep(w, keptByDomain.get(w.domain)!, call.from + proven.length);
      if (w.from === call.from + proven.length) w.atLeast = cutByDomain.get(w.domain)!.length;
    }
    // Nothing proven: the domain that filled most of the call goes in smaller calls, until it is alone.
    if (proven.length === 0) {
      const largest = call.work.reduce((most, w) => (w.atLeast > most.atLeast ? w : most));
      largest.peers = Math.min(largest.peers, Math.ceil(domains.length / 2));
    }
  }

  /** A full answer from a service that does not keep the order: nothing of it is kept. */
  private splitUnordered(call: Call, grouped: Map<string, Contact[]>): void {
    if (call.work.length > 1) {
      for (const w of call.work) w.peers = Math.min(w.peers, Math.ceil(call.work.length / 2));
      return;
    }
    const w = call.work[0]!;
    if (call.from === call.to) {
      w.truncated = true;
      return this.keep(w, grouped.get(w.domain)!, call.to + 1);
    }
    w.oneSeniority = true;
  }

  private keep(w: Work, rows: Contact[], from: number): void {
    if (from > w.from) {
      w.kept.push(...rows);
      w.from = from;
      w.atLeast = 0;
      w.peers = MAX_DOMAINS_PER_CALL;
    }
    if (w.from >= this.wanted.length) {
      this.work.splice(this.work.indexOf(w), 1);
      w.done();
    }
  }

  /**
   * The next call: the oldest domain waiting, with the others waiting at the same seniority, asked
   * for the run of seniorities that packs the most contacts expected without going over the fill;
   * undefined when nothing waits. A slot is never left idle to wait for a fuller call: under a rate
   * limit the pace, not the packing, sets the time.
   */
  private plan(): Call | undefined {
    const free = this.work.filter((w) => !w.busy);
    const head = free[0];
    if (head === undefined) return undefined;
    const from = head.from;
    const group = free.filter((w) => w.from === from);
    const last = this.wanted.length - 1;
    // A domain a service out of order filled a call with alone is asked alone, a seniority a call.
    if (head.oneSeniority) return this.pack([head], from, from, false).call;
    return (this.sliced(group, from) ?? this.pack(group, from, last, true)).call;
  }

  /**
   * The run of seniorities from `from` whose call packs the most contacts expected, once sizes are
   * known and the order is trusted; undefined where every domain's call should ask all that is left:
   * nothing is known yet, or new domains hold so few contacts that a call of 100 is about the limit.
   */
  private sliced(group: Work[], from: number): { call: Call; expected: number } | undefined {
    const all = this.expected(group[0]!, from, this.wanted.length - 1);
    if (!this.order.isTrusted || all === undefined) return undefined;
    if (from === 0 && all * MAX_DOMAINS_PER_CALL <= DOMAIN_BOUND * this.limit) return undefined;
    const packs = [];
    for (let to = from; to < this.wanted.length; to++) packs.push(this.pack(group, from, to, false));
    const most = Math.max(...packs.map((packed) => packed.expected));
    // Even one domain alone is expected to go over: its narrowest run.
    if (most <= 0) return packs[0];
    const good = packs.reverse().filter((packed) => packed.expected >= SLICE_GAIN * most);
    // Each narrower run leaves another call for what it leaves out: the widest that packs about as much.
    // Domains never asked are alike: the run that asks the most of them at once learns the most.
    if (from > 0 || group[0]!.atLeast > 0) return good[0] ?? packs[0];
    return good.reduce((most, packed) => (packed.call.work.length > most.call.work.length ? packed : most), good[0]!);
  }

  private fill(limit: number): number {
    return FILL * limit;
  }

  /** Contacts expected of a domain at `wanted[from..to]`, before what it showed; undefined when nothing is known. */
  private expected(w: Work, from: number, to: number): number | undefined {
    const range = this.wanted.slice(from, to + 1);
    const mean = this.sizing.perDomain(range);
    if (w.prior === undefined) return mean;
    const all = this.sizing.perDomain(SENIORITIES);
    return w.prior * (mean !== undefined && all ? mean / all : range.length / SENIORITIES.length);
  }

  /**
   * The group's oldest domains that fit one call for `wanted[from..to]`, and the contacts expected of
   * it (negative when the first domain alone is expected to go over); `byCount`: up to 100, whatever their size.
   */
  private pack(group: Work[], from: number, to: number, byCount: boolean): { call: Call; expected: number } {
    const estimate = (w: Work) => {
      const expected = this.expected(w, w.from, to);
      if (expected === undefined) return undefined;
      // A domain's proven seniorities say how it compares with what was expected: its rest is scaled alike.
      const keptExpected = w.from === 0 ? undefined : this.expected(w, 0, w.from - 1);
      const scale = keptExpected === undefined ? 1 : (w.kept.length + PSEUDO_ROWS) / (keptExpected + PSEUDO_ROWS);
      return Math.max(expected * scale, w.atLeast);
    };
    const unknown = group[0] !== undefined && estimate(group[0]) === undefined;
    const work: Work[] = [];
    const domains = new Set<string>();
    let expected = 0;
    let cap = MAX_DOMAINS_PER_CALL;
    for (const w of group) {
      if (domains.has(w.domain) || work.length >= Math.min(cap, w.peers)) continue;
      const limit = work.length === 0 ? MAX_CONTACTS_PER_CALL : this.limit;
      const size = estimate(w);
      if (!byCount && work.length > 0 && size !== undefined && expected + size > this.fill(limit)) continue;
      work.push(w);
      domains.add(w.domain);
      cap = Math.min(cap, w.peers);
      expected += size ?? 0;
      if (!byCount && size !== undefined && work.length === 1 && size > this.fill(limit)) break;
    }
    // A domain alone is asked with the largest limit: if it fills that at one seniority, it is cut there.
    const limit = work.length === 1 ? MAX_CONTACTS_PER_CALL : this.limit;
    const over = !byCount && expected > this.fill(limit);
    return { call: { work, from, to, limit }, expected: unknown ? Infinity : over ? -expected : expected };
  }
}

/** Calls are filled to this share of the limit at the contacts expected: sizes are heavy-tailed. */
const FILL = 0.8;
/**
 * New domains are asked 100 a call, for every seniority, while 100 of them are expected to hold at
 * most this many times the limit: their sizes are heavy-tailed, so most such calls hold less than the mean.
 */
const DOMAIN_BOUND = 2;
/** A run of seniorities narrower than all that is left is asked only where it packs this much less. */
const SLICE_GAIN = 0.9;
/** Rows added to a domain's proven count and to the mean before comparing them (a small count says little). */
const PSEUDO_ROWS = 2;

/** Groups a call's contacts by domain, keeping the service's order within each domain. */
export function groupByDomain(domains: string[], contacts: Contact[]): Map<string, Contact[]> {
  const grouped = new Map<string, Contact[]>(domains.map((domain) => [domain, []]));
  for (const contact of contacts) {
    const key = contact.domain.toLowerCase();
    const bucket = grouped.get(key);
    // A contact for a domain we did not ask about is the service's business; we only write what we asked.
    if (bucket) bucket.push(contact);
  }
  return grouped;
}

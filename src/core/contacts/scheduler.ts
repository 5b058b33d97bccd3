import {
  MAX_CONTACTS_PER_CALL,
  MAX_DOMAINS_PER_CALL,
  type Contact,
  type ContactsMeta,
  type Seniority,
} from '../../api/index.js';
import type { SeniorityOrder } from './proofs.js';
import type { ContactSizing } from './sizing.js';

type Source = ContactsMeta['source'] | undefined;

/** A domain's contacts once every asked seniority is known: the service's order, seniority by seniority. */
export interface Resolved {
  contacts: Contact[];
  truncated: boolean;
  source: Source;
}

/** One contacts call: these domains, the seniorities `wanted[from..to]`, at most `limit` rows. */
interface Call {
  members: DomainState[];
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
class DomainState {
  /** `wanted[from..]` are still to ask; those above are in `kept`, whole. */
  from = 0;
  kept: Contact[] = [];
  truncated = false;
  source: Source;
  busy = false;
  /** The most domains a call for it may carry: halved by each full answer that proved nothing. */
  maxDomainsPerCall = MAX_DOMAINS_PER_CALL;
  /** Rows of seniority `wanted[from]` that a cut answer showed: it has at least that many there. */
  minimumAtFrom = 0;
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
 * Plans the contacts calls of every batch in flight together. Domains never asked go 100 a call for
 * every seniority: most such calls come back whole. What the full answers left is packed with what
 * other batches left, at the contacts each domain is expected to hold below what it showed (sizing.ts),
 * each call close to the limit without filling it. A full answer keeps what the seniority order proves
 * (proofs.ts). Only the number of calls depends on the planning, never the contacts a domain ends with.
 */
export class ContactScheduler {
  private readonly states: DomainState[] = [];
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
    const states = await new Promise<DomainState[]>((resolve, reject) => {
      if (this.error !== undefined) return reject(this.error);
      let left = domains.length;
      const states = domains.map(
        (domain) =>
          new DomainState(domain, priorOf?.(domain), () => {
            if (--left > 0) return;
            this.waiting.delete(reject);
            resolve(states);
          }),
      );
      if (left === 0) return resolve(states);
      this.waiting.add(reject);
      this.states.push(...states);
      this.pump();
    });
    return new Map(
      states.map((state) => [state.domain, { contacts: state.kept, truncated: state.truncated, source: state.source }]),
    );
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
      for (const state of call.members) state.busy = true;
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
    const domains = call.members.map((state) => state.domain);
    const { data, meta } = await this.ask(domains, call.limit, seniorities);
    this.order.check(data, seniorities);
    const grouped = groupByDomain(domains, data);
    for (const state of call.members) {
      state.busy = false;
      state.source ??= meta?.source;
    }
    // Only first calls teach the means of domains never asked: later ones carry domains picked by size.
    const first = call.from === 0;
    if (data.length < call.limit) {
      if (first) this.sizing.learnLayers(domains.length, call.from, call.to, this.countsOf(data));
      for (const state of call.members) this.keep(state, grouped.get(state.domain)!, call.to + 1);
      return;
    }
    const proven = this.order.provenBy(data, seniorities);
    if (proven === undefined) return this.splitUnordered(call, grouped);
    const cutAt = call.from + proven.length;
    const cutRows = data.filter((row) => row.seniority === this.wanted[cutAt]);
    if (first) this.sizing.learnCut(domains.length, cutAt, cutRows.length);
    if (proven.length === 0 && domains.length === 1) {
      // The most senior seniority asked fills the largest call alone: the domain is cut there.
      const state = call.members[0]!;
      state.truncated = true;
      return this.keep(state, data, call.from + 1);
    }
    const kept = data.filter((row) => proven.includes(row.seniority!));
    if (first && cutAt > 0) this.sizing.learnLayers(domains.length, 0, cutAt - 1, this.countsOf(kept));
    const keptByDomain = groupByDomain(domains, kept);
    const cutByDomain = groupByDomain(domains, cutRows);
    for (const state of call.members) {
      this.keep(state, keptByDomain.get(state.domain)!, cutAt);
      if (state.from === cutAt)
        state.minimumAtFrom = Math.max(state.minimumAtFrom, cutByDomain.get(state.domain)!.length);
    }
    // Nothing proven: the domain that filled most of the call goes in smaller calls, until it is alone.
    if (proven.length === 0) {
      const largest = call.members.reduce((most, state) => (state.minimumAtFrom > most.minimumAtFrom ? state : most));
      largest.maxDomainsPerCall = Math.min(largest.maxDomainsPerCall, Math.ceil(domains.length / 2));
    }
  }

  /** Contacts per seniority index. */
  private countsOf(rows: readonly Contact[]): number[] {
    const counts = new Array<number>(this.wanted.length).fill(0);
    for (const row of rows) {
      const layer = this.wanted.indexOf(row.seniority!);
      if (layer !== -1) counts[layer]! += 1;
    }
    return counts;
  }

  /** A full answer from a service that does not keep the order: nothing of it is kept. */
  private splitUnordered(call: Call, grouped: Map<string, Contact[]>): void {
    if (call.members.length > 1) {
      for (const state of call.members)
        state.maxDomainsPerCall = Math.min(state.maxDomainsPerCall, Math.ceil(call.members.length / 2));
      return;
    }
    const state = call.members[0]!;
    if (call.from === call.to) {
      state.truncated = true;
      return this.keep(state, grouped.get(state.domain)!, call.to + 1);
    }
    state.oneSeniority = true;
  }

  private keep(state: DomainState, rows: Contact[], from: number): void {
    if (from > state.from) {
      state.kept.push(...rows);
      state.from = from;
      state.minimumAtFrom = 0;
      state.maxDomainsPerCall = MAX_DOMAINS_PER_CALL;
    }
    if (state.from >= this.wanted.length) {
      this.states.splice(this.states.indexOf(state), 1);
      if (!state.truncated && this.order.isTrusted) this.sizing.learnDomain(this.countsOf(state.kept));
      state.done();
    }
  }

  /** Contacts expected of a domain at `wanted[state.from..to]`; undefined when nothing is known yet. */
  private expected(state: DomainState, to: number): number | undefined {
    let expected: number | undefined;
    if (state.from > 0) expected = this.sizing.expectedBelowKept(state.kept.length, state.from, to);
    else if (state.prior === undefined) expected = this.sizing.expectedOfNewDomain(0, to);
    else {
      const share = this.sizing.expectedOfNewDomain(0, to);
      const all = this.sizing.expectedOfNewDomain(0, this.wanted.length - 1);
      expected = state.prior * (share !== undefined && all ? share / all : (to + 1) / this.wanted.length);
    }
    return expected === undefined ? undefined : Math.max(expected, state.minimumAtFrom);
  }

  /**
   * The next call: the oldest domain waiting, with others waiting at the same seniority; undefined
   * when nothing waits. A slot is never left idle to wait for a fuller call: under a rate limit the
   * pace, not the packing, sets the time.
   */
  private plan(): Call | undefined {
    const free = this.states.filter((state) => !state.busy);
    const head = free[0];
    if (head === undefined) return undefined;
    const from = head.from;
    const last = this.wanted.length - 1;
    const group = free.filter((state) => state.from === from);
    // A domain a service out of order filled a call with alone is asked alone, a seniority a call.
    if (head.oneSeniority) return { members: [head], from, to: from, limit: MAX_CONTACTS_PER_CALL };
    const all = this.expected(head, last);
    if (!this.order.isTrusted || all === undefined) return this.byCount(group, from, last);
    if (from === 0 && head.prior === undefined) return this.firstCall(group, all);
    if (all <= this.fill(MAX_CONTACTS_PER_CALL)) return this.byExpected(group, from, last);
    // Expected to go over alone: the widest run of its seniorities expected to fit, asked alone.
    let to = Math.max(from, last - 1);
    while (to > from && this.expected(head, to)! > this.fill(MAX_CONTACTS_PER_CALL)) to--;
    return { members: [head], from, to, limit: MAX_CONTACTS_PER_CALL };
  }

  /**
   * Domains never asked: 100 a call for every seniority, unless 100 of them are expected to hold many
   * times the limit; then 100 for the most senior seniorities that fit, or as many as fit the first.
   */
  private firstCall(group: DomainState[], all: number): Call {
    const last = this.wanted.length - 1;
    // A cut in the most senior seniority asked proves nothing: 100 domains go whole only where it is expected to fit.
    const firstFits = this.expected(group[0]!, 0)! * MAX_DOMAINS_PER_CALL <= this.fill(this.limit);
    if (all * MAX_DOMAINS_PER_CALL <= FIRST_CALL_MAX_LIMITS * this.limit && firstFits)
      return this.byCount(group, 0, last);
    for (let to = last - 1; to >= 0; to--)
      if (this.expected(group[0]!, to)! * MAX_DOMAINS_PER_CALL <= this.fill(this.limit))
        return this.byCount(group, 0, to);
    return this.byExpected(group, 0, 0);
  }

  private fill(limit: number): number {
    return FILL_SHARE * limit;
  }

  /** The group's oldest domains, up to 100 whatever their size. */
  private byCount(group: DomainState[], from: number, to: number): Call {
    const members: DomainState[] = [];
    let cap = MAX_DOMAINS_PER_CALL;
    for (const state of group) {
      if (members.length >= Math.min(cap, state.maxDomainsPerCall)) continue;
      members.push(state);
      cap = Math.min(cap, state.maxDomainsPerCall);
    }
    return { members, from, to, limit: members.length === 1 ? MAX_CONTACTS_PER_CALL : this.limit };
  }

  /** The group's oldest domains whose contacts expected at `from..to` fit one call together. */
  private byExpected(group: DomainState[], from: number, to: number): Call {
    const members: DomainState[] = [];
    let cap = MAX_DOMAINS_PER_CALL;
    let expected = 0;
    for (const state of group) {
      if (members.length >= Math.min(cap, state.maxDomainsPerCall)) continue;
      const size = this.expected(state, to) ?? 0;
      const limit = members.length === 0 ? MAX_CONTACTS_PER_CALL : this.limit;
      if (members.length > 0 && expected + size > this.fill(limit)) continue;
      members.push(state);
      cap = Math.min(cap, state.maxDomainsPerCall);
      expected += size;
    }
    return { members, from, to, limit: members.length === 1 ? MAX_CONTACTS_PER_CALL : this.limit };
  }
}

/** Calls are filled to this share of the limit at the contacts expected: sizes are heavy-tailed. */
const FILL_SHARE = 0.9;
/**
 * Domains never asked go 100 a call for every seniority while 100 of them are expected to hold at most
 * this many times the limit: most such calls hold less than the mean, and a cut one keeps what it proves.
 */
const FIRST_CALL_MAX_LIMITS = 4;

/** Groups a call's contacts by domain, keeping the service's order within each domain. */
function groupByDomain(domains: string[], contacts: Contact[]): Map<string, Contact[]> {
  const grouped = new Map<string, Contact[]>(domains.map((domain) => [domain, []]));
  for (const contact of contacts) {
    const key = contact.domain.toLowerCase();
    const bucket = grouped.get(key);
    // A contact for a domain we did not ask about is the service's business; we only write what we asked.
    if (bucket) bucket.push(contact);
  }
  return grouped;
}

import { SENIORITIES, type Contact, type ContactsMeta, type ProspectClient, type Seniority } from '../../api/index.js';
import { SeniorityOrder } from './proofs.js';
import { ContactSizing, MAX_DOMAINS_PER_CALL } from './sizing.js';
import { mapInOrder, Semaphore } from '../../util/ordered-pool.js';
import { countOf } from '../../ui/format-count.js';

export { MAX_DOMAINS_PER_CALL };
/** The service's largest `limit` (spec §4.2). */
export const MAX_CONTACTS_PER_CALL = 1000;

export interface FanoutOptions {
  seniority?: Seniority[];
  /** The service's per-call `limit`: it caps all the contacts of one call together. */
  limit: number;
  /** HTTP calls in flight at once. */
  concurrency: number;
  /**
   * Batches started ahead of the oldest unfinished one (default: 2 per call in flight). Results
   * come out in input order, so a batch that needs several calls holds up the ones behind it;
   * `prospect contacts` looks further ahead to keep its calls busy. The pipeline keeps the default:
   * it checkpoints a company page once its contacts are written, and reading further ahead would
   * commit its first page later.
   */
  batchesAhead?: number;
  /**
   * For items that arrive from a stream (`companies | contacts`): a partial batch is asked for
   * once no item has come for this long, instead of waiting for the batch to fill or the input
   * to end. Without it a batch waits for its last item, as the pipeline's pages always have it.
   */
  flushAfterMs?: number;
  /** Contacts per domain known beforehand (the service's count of the set): sizes the first calls. */
  contactsPerDomain?: number;
}

export interface DomainContacts<Item> {
  item: Item;
  domain: string;
  contacts: Contact[];
  /**
   * Cut: this domain alone filled the service's largest limit at a single seniority, so it has
   * more contacts than any call can return. Never true for a domain that a larger call showed whole.
   */
  truncated: boolean;
  /** The source the service stated for the call that answered this domain. */
  source: ContactsMeta['source'] | undefined;
}

type Source = ContactsMeta['source'] | undefined;

interface Resolved {
  contacts: Contact[];
  truncated: boolean;
  source: Source;
}

/** What the fan-out cost: calls made and contact rows received (kept or not), for the run's record. */
export interface FanoutStats {
  calls: number;
  rows: number;
}

export function newFanoutStats(): FanoutStats {
  return { calls: 0, rows: 0 };
}

/** "21 calls (20,912 contacts received)": what the run cost, next to what it wrote. */
export function callsText(stats: FanoutStats): string {
  return `${countOf(stats.calls, 'call')} (${countOf(stats.rows, 'contact')} received)`;
}

/**
 * Asks the contacts endpoint for every item's domain, at most 100 domains a call and `concurrency`
 * calls at once, and yields each item with its contacts in input order (the service's order within
 * a domain, seniority by seniority). Nothing is dropped at any `limit`. A call that comes back full
 * may have been cut, but the service sends the most senior first (spec §4.2), so it holds every
 * contact of the seniorities above its last row's: those are kept and only the rest is asked again,
 * split by what the kept rows say of the domains' sizes. A full answer that completes no seniority
 * is asked again in halves; a domain that alone fills the service's largest limit at one seniority
 * is cut there (reported as truncated). A service whose answers break that order gets the safe
 * split: nothing kept from a full answer, halves until answers are whole, and a domain that fills
 * the largest limit alone asked once per seniority.
 */
export async function* fetchContactsInOrder<Item>(
  client: Pick<ProspectClient, 'contacts'>,
  items: AsyncIterable<Item> | Iterable<Item>,
  domainOf: (item: Item) => string,
  options: FanoutOptions,
  stats: FanoutStats = newFanoutStats(),
): AsyncGenerator<DomainContacts<Item>> {
  const slots = new Semaphore(options.concurrency);
  const sizing = new ContactSizing(options.limit, options.contactsPerDomain);
  const order = new SeniorityOrder();
  /** The seniorities asked for, most senior first. */
  const wanted = SENIORITIES.filter((seniority) => options.seniority?.includes(seniority) ?? true);
  const ask = async (domains: string[], limit: number, seniorities: readonly Seniority[]) => {
    // The first call for a domain goes out as the user asked (no filter, or theirs); later ones name what is left.
    const seniority = seniorities.length === wanted.length ? options.seniority : [...seniorities];
    const answer = await slots.run(() => {
      stats.calls += 1;
      return client.contacts({ domains, limit, seniority });
    });
    stats.rows += answer.data.length;
    order.check(answer.data, seniorities);
    firstAnswer();
    return answer;
  };

  const resolveDomains = async (
    domains: string[],
    seniorities: readonly Seniority[],
  ): Promise<Map<string, Resolved>> => {
    // A domain alone is asked with the largest limit: if it fills that at one seniority, it is cut there.
    const limit = domains.length === 1 ? MAX_CONTACTS_PER_CALL : options.limit;
    const { data, meta } = await ask(domains, limit, seniorities);
    const source = meta?.source;
    const grouped = groupByDomain(domains, data);
    if (data.length < limit) {
      sizing.learn(domains.length, seniorities, data);
      return resolvedAs(grouped, false, source);
    }
    const proven = order.provenBy(data, seniorities);
    if (proven === undefined) return splitSafely(domains, seniorities, grouped, source);
    const cutIn = seniorities[proven.length]!;
    sizing.learnCut(domains.length, cutIn, data.filter((row) => row.seniority === cutIn).length);
    if (proven.length > 0) {
      const kept = data.filter((row) => proven.includes(row.seniority!));
      sizing.learn(domains.length, proven, kept);
      const rest = seniorities.slice(proven.length);
      const parts = sizing.partsFor(domains.length, rest, proven, kept.length, 1);
      const keptByDomain = groupByDomain(domains, kept);
      return withRest(
        resolvedAs(keptByDomain, false, source),
        await resolveParts(splitByWeight(domains, keptByDomain, parts), rest),
      );
    }
    // The most senior seniority asked fills the call alone.
    if (domains.length === 1) {
      const cut = resolvedAs(grouped, true, source);
      return seniorities.length === 1 ? cut : withRest(cut, await resolveDomains(domains, seniorities.slice(1)));
    }
    return resolveParts(
      splitByWeight(domains, grouped, sizing.partsFor(domains.length, seniorities, [], 0, 2)),
      seniorities,
    );
  };

  const resolveParts = async (parts: string[][], seniorities: readonly Seniority[]): Promise<Map<string, Resolved>> => {
    const answers = await Promise.all(parts.map((part) => resolveDomains(part, seniorities)));
    return new Map(answers.flatMap((answer) => [...answer]));
  };

  /** A full answer from a service that does not keep the order: nothing of it is kept. */
  const splitSafely = async (
    domains: string[],
    seniorities: readonly Seniority[],
    grouped: Map<string, Contact[]>,
    source: Source,
  ): Promise<Map<string, Resolved>> => {
    if (domains.length > 1) return resolveParts(splitByWeight(domains, grouped, 2), seniorities);
    const domain = domains[0]!;
    if (seniorities.length === 1) return resolvedAs(grouped, true, source);
    const answers = await Promise.all(seniorities.map((seniority) => ask(domains, MAX_CONTACTS_PER_CALL, [seniority])));
    // One call per seniority, most senior first: the same list as the service's order would give.
    return new Map([
      [
        domain,
        {
          contacts: answers.flatMap(({ data }) => groupByDomain(domains, data).get(domain) ?? []),
          truncated: answers.some(({ data }) => data.length >= MAX_CONTACTS_PER_CALL),
          source: answers[0]?.meta?.source ?? source,
        },
      ],
    ]);
  };

  // Slow start: the first batch is sized blind, the others only once its first answer has said something.
  let firstAnswer: () => void = () => {};
  const answered = new Promise<void>((resolve) => (firstAnswer = resolve));
  const batches = afterFirst(
    batchItems(items, domainOf, () => sizing.batchSize(wanted), options.flushAfterMs),
    answered,
  );
  const resolved = mapInOrder(batches, options.batchesAhead ?? options.concurrency * 2, async (batch) => {
    const unique = [...new Set(batch.map(domainOf))];
    return { batch, byDomain: await resolveDomains(unique, wanted) };
  });
  for await (const { batch, byDomain } of resolved) {
    for (const item of batch) {
      const domain = domainOf(item);
      const found = byDomain.get(domain)!;
      yield { item, domain, ...found };
    }
  }
}

/** The first batch, then the others once `ready` has settled. */
async function* afterFirst<T>(batches: AsyncGenerator<T>, ready: Promise<void>): AsyncGenerator<T> {
  let first = true;
  for await (const batch of batches) {
    yield batch;
    if (first) await ready;
    first = false;
  }
}

function resolvedAs(grouped: Map<string, Contact[]>, truncated: boolean, source: Source): Map<string, Resolved> {
  return new Map([...grouped].map(([domain, contacts]) => [domain, { contacts, truncated, source }]));
}

/** The kept (more senior) contacts of each domain, followed by those of the seniorities asked after them. */
function withRest(kept: Map<string, Resolved>, rest: Map<string, Resolved>): Map<string, Resolved> {
  for (const [domain, first] of kept) {
    const later = rest.get(domain)!;
    kept.set(domain, {
      contacts: [...first.contacts, ...later.contacts],
      truncated: first.truncated || later.truncated,
      source: first.source,
    });
  }
  return kept;
}

/**
 * The domains in `parts` runs of about equal weight, in order; a domain weighs the rows it has shown
 * so far plus the average, so that the large ones end up in different calls.
 */
function splitByWeight(domains: string[], shown: Map<string, Contact[]>, parts: number): string[][] {
  if (parts <= 1) return [domains];
  if (parts >= domains.length) return domains.map((domain) => [domain]);
  const weights = domains.map((domain) => shown.get(domain)?.length ?? 0);
  const average = weights.reduce((sum, weight) => sum + weight, 0) / domains.length;
  const total = weights.reduce((sum, weight) => sum + weight + average, 0) || domains.length;
  const chunks: string[][] = [];
  let chunk: string[] = [];
  let filled = 0;
  domains.forEach((domain, index) => {
    const weight = weights[index]! + average || 1;
    const left = domains.length - index;
    const chunksLeft = parts - chunks.length;
    // Close a run once it holds its share, while every run still to come can have a domain.
    if (
      chunk.length > 0 &&
      chunksLeft > 1 &&
      (filled + weight / 2 > ((chunks.length + 1) * total) / parts || left < chunksLeft)
    ) {
      chunks.push(chunk);
      chunk = [];
    }
    chunk.push(domain);
    filled += weight;
  });
  chunks.push(chunk);
  return chunks;
}

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

/**
 * The items in batches of at most `batchSize()` distinct domains, in input order. A batch goes as
 * soon as it is full, or with `flushAfterMs` once the input has paused that long.
 */
async function* batchItems<Item>(
  items: AsyncIterable<Item> | Iterable<Item>,
  domainOf: (item: Item) => string,
  batchSize: () => number,
  flushAfterMs: number | undefined,
): AsyncGenerator<Item[]> {
  const iterator = Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : items[Symbol.iterator]();
  const batch: Item[] = [];
  const domains = new Set<string>();
  let pause: PauseWatch | undefined;
  try {
    let next = iterator.next();
    for (;;) {
      const result = pause === undefined ? await next : await Promise.race([next, pause.paused]);
      if (result === PAUSED) {
        // `next` is still on its way: the item it brings starts the following batch.
        pause = undefined;
        yield batch.splice(0);
        domains.clear();
        continue;
      }
      if (result.done) break;
      next = iterator.next();
      const item = result.value;
      const domain = domainOf(item);
      if (!domains.has(domain) && domains.size >= batchSize()) {
        pause?.stop();
        pause = undefined;
        yield batch.splice(0);
        domains.clear();
      }
      domains.add(domain);
      batch.push(item);
      if (flushAfterMs !== undefined) {
        pause ??= new PauseWatch(flushAfterMs);
        pause.arrived();
      }
    }
  } finally {
    pause?.stop();
  }
  if (batch.length > 0) yield batch;
}

const PAUSED = Symbol('paused');

/**
 * Resolves `paused` once `idleMs` have passed without an item. One timer per batch, re-armed for
 * what is left of the wait, rather than one per item: a million domains would set a million timers.
 */
class PauseWatch {
  readonly paused: Promise<typeof PAUSED>;
  private lastArrival = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private resolve: (value: typeof PAUSED) => void = () => {};

  constructor(private readonly idleMs: number) {
    this.paused = new Promise((resolve) => (this.resolve = resolve));
    this.arm(idleMs);
  }

  arrived(): void {
    this.lastArrival = Date.now();
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private arm(waitMs: number): void {
    this.timer = setTimeout(() => {
      const idle = Date.now() - this.lastArrival;
      if (idle >= this.idleMs) this.resolve(PAUSED);
      else this.arm(this.idleMs - idle);
    }, waitMs);
    // The input being read keeps the process alive; the watch alone must not.
    this.timer.unref();
  }
}

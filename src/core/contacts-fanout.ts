import { SENIORITIES, type Contact, type ContactsMeta, type ProspectClient, type Seniority } from '../api/index.js';
import { mapInOrder, Semaphore } from './ordered-pool.js';

export const MAX_DOMAINS_PER_CALL = 100;
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
   * come out in input order, so a batch whose call came back full and had to be split holds up the
   * ones behind it; `prospect contacts` looks further ahead to keep its calls busy (bench/: 1.46
   * times the latency-bound limit at --concurrency 8 with 2 per call, 1.15 times with 8). The
   * pipeline keeps the default: it checkpoints a company page once its contacts are written, and
   * reading further ahead would commit its first page later.
   */
  batchesAhead?: number;
  /**
   * For items that arrive from a stream (`companies | contacts`): a partial batch is asked for
   * once no item has come for this long, instead of waiting for the batch to fill or the input
   * to end. Without it a batch waits for its last item, as the pipeline's pages always have it.
   */
  flushAfterMs?: number;
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

export interface FanoutStats {
  calls: number;
  splits: number;
}

/**
 * Asks the contacts endpoint for every item's domain, at most 100 domains a call and `concurrency`
 * calls at once, and yields each item with its contacts in input order (the service's order within
 * a domain). Nothing is dropped at any `limit`: a call that comes back full may have been cut, so it
 * is split and asked again; a domain that alone fills the limit is asked again at the service's
 * largest limit, and if it fills that too, once per seniority. Only a domain that fills the largest
 * limit at a single seniority is cut (reported as truncated).
 */
export async function* fetchContactsInOrder<Item>(
  client: Pick<ProspectClient, 'contacts'>,
  items: AsyncIterable<Item> | Iterable<Item>,
  domainOf: (item: Item) => string,
  options: FanoutOptions,
  stats: FanoutStats = { calls: 0, splits: 0 },
): AsyncGenerator<DomainContacts<Item>> {
  const slots = new Semaphore(options.concurrency);
  const sizing = new BatchSizing(options.limit);
  const ask = (domains: string[], limit: number, seniority: Seniority[] | undefined) =>
    slots.run(() => {
      stats.calls += 1;
      return client.contacts({ domains, limit, seniority });
    });

  /** One domain whose call came back full at `filled.limit`: asked with more room until it is whole. */
  const resolveAlone = async (domain: string, filled: { limit: number; contacts: Contact[]; source: Source }): Promise<Resolved> => {
    if (filled.limit < MAX_CONTACTS_PER_CALL) {
      const { data, meta } = await ask([domain], MAX_CONTACTS_PER_CALL, options.seniority);
      const contacts = groupByDomain([domain], data).get(domain) ?? [];
      if (data.length < MAX_CONTACTS_PER_CALL) return { contacts, truncated: false, source: meta?.source };
      filled = { limit: MAX_CONTACTS_PER_CALL, contacts, source: meta?.source };
    }
    const seniorities = SENIORITIES.filter((seniority) => options.seniority?.includes(seniority) ?? true);
    if (seniorities.length <= 1) return { contacts: filled.contacts, truncated: true, source: filled.source };
    // The service sends the most senior first, so one call per seniority, in that order, is the same list.
    const answers = await Promise.all(seniorities.map((seniority) => ask([domain], MAX_CONTACTS_PER_CALL, [seniority])));
    return {
      contacts: answers.flatMap(({ data }) => groupByDomain([domain], data).get(domain) ?? []),
      truncated: answers.some(({ data }) => data.length >= MAX_CONTACTS_PER_CALL),
      source: answers[0]?.meta?.source ?? filled.source,
    };
  };

  const resolveDomains = async (domains: string[]): Promise<Map<string, Resolved>> => {
    const { data, meta } = await ask(domains, options.limit, options.seniority);
    const grouped = groupByDomain(domains, data);
    const source = meta?.source;
    if (data.length < options.limit) {
      sizing.learn(domains.length, data.length);
      return new Map(domains.map((domain) => [domain, { contacts: grouped.get(domain) ?? [], truncated: false, source }]));
    }
    if (domains.length === 1) {
      const domain = domains[0]!;
      return new Map([[domain, await resolveAlone(domain, { limit: options.limit, contacts: grouped.get(domain) ?? [], source })]]);
    }
    stats.splits += 1;
    const parts = await Promise.all(splitInto(domains, sizing.partsFor(domains.length)).map(resolveDomains));
    return new Map(parts.flatMap((part) => [...part]));
  };

  const batches = batchItems(items, domainOf, () => sizing.batchSize(), options.flushAfterMs);
  const resolved = mapInOrder(batches, options.batchesAhead ?? options.concurrency * 2, async (batch) => {
    const unique = [...new Set(batch.map(domainOf))];
    return { batch, byDomain: await resolveDomains(unique) };
  });
  for await (const { batch, byDomain } of resolved) {
    for (const item of batch) {
      const domain = domainOf(item);
      const found = byDomain.get(domain)!;
      yield { item, domain, ...found };
    }
  }
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

function splitInto<T>(list: T[], parts: number): T[][] {
  const size = Math.ceil(list.length / parts);
  const chunks: T[][] = [];
  for (let start = 0; start < list.length; start += size) chunks.push(list.slice(start, start + size));
  return chunks;
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
  let batch: Item[] = [];
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

/**
 * Learns how many contacts a domain has on average, from calls that were not cut, so that later
 * calls are sized to fit under the limit instead of being cut and split again. Only the number
 * of calls depends on this, never the output.
 */
class BatchSizing {
  private domains = 0;
  private contacts = 0;

  constructor(private readonly limit: number) {}

  learn(domains: number, contacts: number): void {
    this.domains += domains;
    this.contacts += contacts;
  }

  private get perDomain(): number | undefined {
    return this.domains >= 20 ? this.contacts / this.domains : undefined;
  }

  batchSize(): number {
    const perDomain = this.perDomain;
    if (perDomain === undefined || perDomain === 0) return MAX_DOMAINS_PER_CALL;
    return clamp(Math.floor((0.6 * this.limit) / perDomain), 1, MAX_DOMAINS_PER_CALL);
  }

  partsFor(domainCount: number): number {
    const perDomain = this.perDomain;
    const wanted = perDomain === undefined ? 2 : Math.ceil((domainCount * perDomain) / (0.6 * this.limit));
    return clamp(wanted, 2, domainCount);
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(value, min), max);
}

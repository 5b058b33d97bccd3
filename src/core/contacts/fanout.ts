/**
 * The contacts of many domains at the seniorities asked, batch by batch, in input order; scheduler.ts
 * plans the calls, proofs.ts says what a full answer proves, sizing.ts what a domain is expected to hold.
 *
 * A worked example of one full answer. A call asks 100 domains never asked before for cxo, vp, director
 * and manager (`wanted[0..3]`), limit 1,000. The answer has 1,000 rows, most senior first: 180 cxo,
 * 420 vp, then 400 director; its last row is a director. A full answer may have been cut, but only at
 * its last row's seniority, so every cxo and vp of the 100 domains is in it:
 * - the 600 cxo and vp rows are kept, each domain's whole, and each domain's `from` moves to director;
 * - the 400 director rows are dropped; what each domain showed there is its `minimumAtFrom`;
 * - sizing.ts learns from the answer what a domain holds at cxo, vp and director, and the next calls
 *   ask director and manager, each packed with domains of any batch up to 90% of the limit at the
 *   contacts expected of them (FILL_SHARE).
 * Had all 1,000 rows been cxo, nothing would be proven: the domain that showed most goes into calls of
 * half as many domains (`maxDomainsPerCall`), until alone it is cut at cxo and marked truncated.
 */
import {
  MAX_DOMAINS_PER_CALL,
  SENIORITIES,
  type Contact,
  type ContactsMeta,
  type ProspectClient,
  type Seniority,
} from '../../api/index.js';
import { SeniorityOrder } from './proofs.js';
import { ContactSizing } from './sizing.js';
import { ContactScheduler, type Ask } from './scheduler.js';
import { mapInOrder } from '../../util/ordered-pool.js';
import { countOf } from '../../ui/format-count.js';

export interface FanoutOptions<Item = unknown> {
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
  /** Contacts expected of an item's domain, where the caller knows (the service's count of its kind). */
  expectedContacts?: (item: Item) => number | undefined;
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
 * packed with what other batches still need (scheduler.ts). A full answer that completes no seniority
 * sends the domain that filled it into smaller calls; a domain that alone fills the service's largest
 * limit at one seniority is cut there (reported as truncated). A service whose answers break that
 * order gets the safe split: nothing kept from a full answer, smaller calls until answers are whole,
 * and a domain that fills the largest limit alone asked once per seniority.
 */
export async function* fetchContactsInOrder<Item>(
  client: Pick<ProspectClient, 'contacts'>,
  items: AsyncIterable<Item> | Iterable<Item>,
  domainOf: (item: Item) => string,
  options: FanoutOptions<Item>,
  stats: FanoutStats = newFanoutStats(),
): AsyncGenerator<DomainContacts<Item>> {
  /** The seniorities asked for, most senior first. */
  const wanted = SENIORITIES.filter((seniority) => options.seniority?.includes(seniority) ?? true);
  const sizing = new ContactSizing(wanted.length, options.contactsPerDomain);
  const ask: Ask = async (domains, limit, seniorities) => {
    // The first call for a domain goes out as the user asked (no filter, or theirs); later ones name what is left.
    const seniority = seniorities.length === wanted.length ? options.seniority : [...seniorities];
    stats.calls += 1;
    const answer = await client.contacts({ domains, limit, seniority });
    stats.rows += answer.data.length;
    firstAnswer();
    return answer;
  };
  const scheduler = new ContactScheduler(ask, wanted, new SeniorityOrder(), sizing, options.limit, options.concurrency);

  // Slow start: the first batch goes alone, the others once its first answer has said something.
  let firstAnswer: () => void = () => {};
  const answered = new Promise<void>((resolve) => (firstAnswer = resolve));
  const batches = afterFirst(batchItems(items, domainOf, MAX_DOMAINS_PER_CALL, options.flushAfterMs), answered);
  const resolved = mapInOrder(batches, options.batchesAhead ?? options.concurrency * 2, async (batch) => {
    const itemOf = new Map(batch.map((item) => [domainOf(item), item]));
    const expected = options.expectedContacts;
    const priorOf = expected && ((domain: string) => expected(itemOf.get(domain)!));
    return { batch, byDomain: await scheduler.resolve([...itemOf.keys()], priorOf) };
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

/**
 * The items in batches of at most `batchSize()` distinct domains, in input order. A batch goes as
 * soon as it is full, or with `flushAfterMs` once the input has paused that long.
 */
async function* batchItems<Item>(
  items: AsyncIterable<Item> | Iterable<Item>,
  domainOf: (item: Item) => string,
  batchSize: number,
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
      if (!domains.has(domain) && domains.size >= batchSize) {
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

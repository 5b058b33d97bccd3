/**
 * The standing suppressions a run honours (`prospect forget`): this machine's, and the team's when a
 * state URL is set, both read before any call. Each store keeps keyed hashes only; an address is
 * hashed with each store's key and looked up.
 */
import { cacheDirectory } from '../../config/paths.js';
import type { RunContext } from '../../runtime/context.js';
import type { SuppressionCheck } from '../shared/exclusion.js';
import { openLocalSuppressions } from '../state-store/local-suppressions.js';
import { teamStore } from '../state-store/index.js';
import type { SuppressionStore } from '../state-store/types.js';

interface Loaded {
  hash: (emailKey: string) => string;
  hashes: Set<string>;
}

class Suppression implements SuppressionCheck {
  constructor(private readonly stores: readonly Loaded[]) {}

  get entries(): number {
    return this.stores.reduce((sum, store) => sum + store.hashes.size, 0);
  }

  suppresses(emailKey: string): boolean {
    return this.stores.some((store) => store.hashes.has(store.hash(emailKey)));
  }
}

/** Every suppression in force for this run; `team`: false where the job has no team store to honour. */
export async function loadSuppression(ctx: RunContext): Promise<SuppressionCheck> {
  const stores: Loaded[] = [];
  const local = await openLocalSuppressions(cacheDirectory(ctx.env), { create: false });
  if (local) {
    try {
      stores.push({ hash: local.hash, hashes: await local.hashes() });
    } finally {
      local.close();
    }
  }
  const team = await teamStore(ctx);
  if (team) stores.push({ hash: team.suppressions.hash, hashes: await team.suppressions.hashes() });
  return new Suppression(stores);
}

/** Where `prospect forget` writes: the team's store when a state URL is set, else this machine's. */
export async function suppressionTarget(
  ctx: RunContext,
): Promise<{ store: SuppressionStore; where: string; close(): void }> {
  const team = await teamStore(ctx);
  if (team) return { store: team.suppressions, where: `the team store ${team.shown}`, close: () => {} };
  const directory = cacheDirectory(ctx.env);
  const local = (await openLocalSuppressions(directory, { create: true }))!;
  return { store: local, where: `this machine's store (${directory})`, close: () => local.close() };
}

/** How many addresses each store in force holds (`forget --list`): this machine's, and the team's. */
export async function loadSuppressionCounts(ctx: RunContext): Promise<{ where: string; entries: number }[]> {
  const directory = cacheDirectory(ctx.env);
  const counts: { where: string; entries: number }[] = [];
  const local = await openLocalSuppressions(directory, { create: false });
  try {
    counts.push({ where: `this machine's store (${directory})`, entries: local ? (await local.hashes()).size : 0 });
  } finally {
    local?.close();
  }
  const team = await teamStore(ctx);
  if (team) counts.push({ where: `the team store ${team.shown}`, entries: (await team.suppressions.hashes()).size });
  return counts;
}

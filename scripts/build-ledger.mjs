#!/usr/bin/env node
/**
 * Makes a pipeline --state directory whose exports ledger holds N random lead keys, fast, for the
 * bench (bench/ledger.js): the memory and time of `pipeline --only-new` against a long history.
 *
 *   npm run build && node scripts/build-ledger.mjs DIR 10000000
 *
 * The keys go in through the ledger's own code (dist/), as one run's success, in ascending order:
 * each is drawn at random from its own 1/N of the key space, so the keys are spread over the whole
 * space as real ones are (they interleave with the sandbox's leads in the B-tree) while the inserts
 * append to the tree instead of landing on random pages. A real lead's key is the start of a
 * SHA-256: the chance that any of 10,000,000 such keys equals one of a million real leads is about
 * 10^-16, and the bench checks it did not happen (the same leads with the big ledger as with an
 * empty one). DIR is created; a DIR that already has a ledger is refused.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const [dirArg, countArg] = process.argv.slice(2);
const count = Number(countArg);
if (!dirArg || !Number.isSafeInteger(count) || count < 0) {
  process.stderr.write('usage: node scripts/build-ledger.mjs DIR N   (N random lead keys in DIR/exported.sqlite)\n');
  process.exit(2);
}
if (!existsSync(join(root, 'dist', 'core', 'pipeline', 'state', 'exports-ledger.js'))) {
  process.stderr.write('build-ledger: dist/ is missing; run `npm run build` first.\n');
  process.exit(2);
}
const { StateDirectory } = await import(join(root, 'dist', 'core', 'pipeline', 'state', 'state-directory.js'));
const { LocalExportsLedger } = await import(join(root, 'dist', 'core', 'pipeline', 'state', 'exports-ledger.js'));

const dir = resolve(dirArg);
const state = await StateDirectory.open(dir);
if (existsSync(state.exportsLedgerPath)) {
  process.stderr.write(`build-ledger: ${state.exportsLedgerPath} exists already.\n`);
  process.exit(2);
}

const BATCH = 8192;
/** The keys' first 48 bits place them; the other 48 are random. */
const PLACE = 2 ** 48;

/**
 * The keys in ascending order, a batch at a time: the i-th key's first 48 bits are a random point
 * of the i-th of N equal slices of [0, 2^48) (exact in a double), the last 48 bits random.
 */
async function* batches() {
  for (let start = 0; start < count; start += BATCH) {
    const size = Math.min(BATCH, count - start);
    const bytes = randomBytes(size * 12);
    const batch = [];
    for (let j = 0; j < size; j++) {
      const key = bytes.subarray(j * 12, j * 12 + 12);
      key.writeUIntBE(Math.floor(((start + j + Math.random()) * PLACE) / count), 0, 6);
      batch.push(key);
    }
    yield batch;
  }
}

const started = Date.now();
const ledger = await LocalExportsLedger.open(state);
try {
  const runId = `build-ledger-${randomInt(1e9).toString(36)}`;
  const added = await ledger.recordRun(
    { run_id: runId, finished_at: new Date().toISOString(), rows: count },
    batches(),
  );
  const bytes = statSync(state.exportsLedgerPath).size;
  process.stderr.write(
    `build-ledger: ${added.toLocaleString('en-US')} keys in ${state.exportsLedgerPath} (${(bytes / 1024 / 1024).toFixed(0)} MB) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
  );
} finally {
  ledger.close();
}

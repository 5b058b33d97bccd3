/**
 * The thread a --state directory's diff runs on (diff-thread.ts is the other end): one SeriesDiff
 * over the local store, its calls taken one at a time in the order they came.
 */
import { parentPort } from 'node:worker_threads';
import { CliError } from '../../exit-codes.js';
import type { CompanyRow } from '../../api/index.js';
import type { DiffReply, DiffThreadSetup, ThreadError } from './diff-thread.js';
import { SeriesDiff, type ChangeRow, type GoneCompany } from './diff.js';
import { LocalSnapshotStore } from './local-store.js';

let store: LocalSnapshotStore | undefined;
let diff: SeriesDiff | undefined;
let gone: AsyncGenerator<GoneCompany[]> | undefined;

const opened = (): SeriesDiff => {
  if (diff === undefined) throw new Error('the snapshot thread was called before it opened');
  return diff;
};
const progress = () => ({ counts: opened().counts, listed: opened().listed });

const calls: Record<string, (args: never) => Promise<unknown> | unknown> = {
  async open(setup: DiffThreadSetup) {
    store = await LocalSnapshotStore.open(setup.stateDir);
    const series = await store.openSeries(setup.seriesKey, setup.takenAt, setup.resumeId);
    diff = new SeriesDiff(series, setup.observe);
    return { previous: diff.previous, resumed: diff.resumed };
  },
  async page({ rows, written }: { rows: CompanyRow[]; written: ReadonlySet<ChangeRow['change']> | undefined }) {
    const out = await opened().page(rows, written);
    return { rows: out, ...progress() };
  },
  async gone() {
    gone ??= opened().goneCompanies();
    const next = await gone.next();
    return { rows: next.done === true ? null : next.value, ...progress() };
  },
  publish: (source: string | undefined) => opened().publish(source),
  abandon: () => opened().abandon(),
  close: () => store?.close(),
};

let queue: Promise<void> = Promise.resolve();
parentPort!.on('message', ({ id, op, args }: { id: number; op: string; args: never }) => {
  queue = queue.then(async () => {
    let reply: DiffReply;
    try {
      reply = { id, value: await calls[op]!(args) };
    } catch (error) {
      reply = { id, error: threadError(error) };
    }
    parentPort!.postMessage(reply);
  });
});

function threadError(error: unknown): ThreadError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const { name, message, stack } = error;
  return error instanceof CliError
    ? { name, message, stack, exitCode: error.exitCode, hint: error.hint }
    : { name, message, stack };
}

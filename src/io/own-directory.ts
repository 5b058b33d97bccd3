/**
 * Whether prospect may trust a directory it keeps state in (a --state directory, the cache of paid
 * results, the config directory) and the files in it: as ssh judges ~/.ssh, another user who can
 * write there could swap the ledger for a file of their own, or plant a base-url that gets the key.
 */
import { readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../exit-codes.js';

const WRITABLE_BY_GROUP_OR_OTHERS = 0o022;
const STICKY = 0o1000;

/**
 * Refuses (exit 2) a directory, or a file in it, owned by another user than the one running prospect
 * (root aside) or writable by group or others; and a parent another user could rename it out of (one
 * writable by others and not sticky as /tmp is, or owned by another user). `what` names it in the message;
 * `files`: the only files of it prospect reads (else every file and folder in it is judged).
 */
export function assertOwnDirectory(directory: string, what: string, files?: readonly string[]): void {
  const uid = process.geteuid?.();
  if (uid === undefined) return; // Windows: no owners or modes to judge
  const given = resolve(directory);
  const real = realpathOrSelf(given);
  const stats = statSync(real);
  judge(real, stats, uid, what, { writable: WRITABLE_BY_GROUP_OR_OTHERS });
  for (const parent of new Set([...parentsOf(given), ...parentsOf(real)]))
    judge(parent, statSync(parent), uid, `the parent ${parent} of ${what}`, { writable: 0o022, stickyOk: true });
  for (const name of files ?? entriesOf(real)) {
    const path = join(real, name);
    const entry = statSync(path, { throwIfNoEntry: false });
    // A file's group or others write only where they can reach it: the directory's x bits for them.
    if (entry) judge(path, entry, uid, `${path} in ${what}`, { writable: (stats.mode & 0o011) << 1 });
  }
}

/** The files and folders of a directory (not sockets, FIFOs or dangling links: prospect reads none). */
function entriesOf(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true })
    .filter((entry) => entry.isFile() || entry.isDirectory())
    .map((entry) => entry.name);
}

function judge(path: string, stats: Stats, uid: number, what: string, rule: { writable: number; stickyOk?: boolean }) {
  if (stats.uid !== uid && stats.uid !== 0)
    throw new UsageError(
      `${what} is owned by another user (uid ${stats.uid}; you are uid ${uid}), so prospect does not trust it.`,
      `Use a directory of your own, or make it yours: chown ${uid} ${path}.`,
    );
  const writable = stats.mode & rule.writable;
  // A sticky directory (/tmp) lets no one but an entry's owner rename or remove it.
  if (writable === 0 || (rule.stickyOk && (stats.mode & STICKY) !== 0)) return;
  throw new UsageError(
    `${what} is writable by ${writable & 0o002 ? 'other users' : 'its group'} (mode ` +
      `${(stats.mode & 0o7777).toString(8).padStart(4, '0')}), so prospect does not trust it.`,
    `Run chmod go-w ${path}, or use a directory of your own.`,
  );
}

/** Every directory above `path`, up to the root. */
function parentsOf(path: string): string[] {
  const parents: string[] = [];
  for (let parent = dirname(path); ; parent = dirname(parent)) {
    parents.push(parent);
    if (dirname(parent) === parent) return parents;
  }
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

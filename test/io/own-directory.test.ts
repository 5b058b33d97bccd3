/**
 * assertOwnDirectory: a directory prospect keeps state in, and its files, must be the user's (or
 * root's) and writable by no one else, and no parent may let another user swap it (issue 41.7).
 * Built as root with chown to nobody (uid 65534): the owner is judged, so the test process's own uid is enough.
 */
import { chmodSync, chownSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/exit-codes.js';
import { assertOwnDirectory } from '../../src/io/own-directory.js';
import { scratchDirSync } from '../helpers/scratch.js';

const IS_ROOT = process.geteuid?.() === 0;
const NOBODY = 65534;

function refusal(directory: string, files?: string[]): UsageError | undefined {
  try {
    assertOwnDirectory(directory, `--state ${directory}`, files);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
}

/** A fresh directory (0700) in a fresh private parent (0700). */
function fresh(): { parent: string; dir: string } {
  const parent = scratchDirSync();
  const dir = join(parent, 'state');
  mkdirSync(dir, { mode: 0o700 });
  return { parent, dir };
}

describe('assertOwnDirectory', () => {
  it('takes a private directory of the user, with its private files', () => {
    const { dir } = fresh();
    writeFileSync(join(dir, 'ledger.ndjson'), '', { mode: 0o600 });
    mkdirSync(join(dir, 'current'), { mode: 0o700 });
    expect(refusal(dir)).toBeUndefined();
  });

  it.for([0o777, 0o770, 0o702, 0o720, 0o1777])('refuses the directory itself at mode %o, naming the fix', (mode) => {
    const { dir } = fresh();
    chmodSync(dir, mode);
    const error = refusal(dir);
    expect(error?.message).toMatch(
      new RegExp(`^--state ${dir} is writable by (its group|other users) \\(mode 0?${mode.toString(8)}\\)`),
    );
    expect(error?.hint).toBe(`Run chmod go-w ${dir}, or use a directory of your own.`);
  });

  it.skipIf(!IS_ROOT)('refuses a directory, a file in it or a parent owned by another user', () => {
    const owned = fresh();
    chownSync(owned.dir, NOBODY, NOBODY);
    expect(refusal(owned.dir)?.message).toMatch(/is owned by another user \(uid 65534; you are uid 0\)/);
    expect(refusal(owned.dir)?.hint).toBe(`Use a directory of your own, or make it yours: chown 0 ${owned.dir}.`);

    const file = fresh();
    writeFileSync(join(file.dir, 'config.json'), '{}', { mode: 0o600 });
    chownSync(join(file.dir, 'config.json'), NOBODY, NOBODY);
    expect(refusal(file.dir)?.message).toContain(
      `${join(file.dir, 'config.json')} in --state ${file.dir} is owned by another user`,
    );

    const parent = fresh();
    chownSync(parent.parent, NOBODY, NOBODY);
    expect(refusal(parent.dir)?.message).toMatch(/^the parent .* is owned by another user/);
  });

  it('refuses a parent others may write that is not sticky; a sticky one (/tmp) is fine', () => {
    const { parent, dir } = fresh();
    chmodSync(parent, 0o777);
    expect(refusal(dir)?.message).toBe(
      `the parent ${parent} of --state ${dir} is writable by other users (mode 0777), so prospect does not trust it.`,
    );
    chmodSync(parent, 0o1777);
    expect(refusal(dir)).toBeUndefined();
    chmodSync(parent, 0o775);
    expect(refusal(dir)?.message).toContain('is writable by its group (mode 0775)');
  });

  it('refuses a file others may write where they can reach it, and only there', () => {
    const { dir } = fresh();
    const ledger = join(dir, 'verify-1.ndjson');
    writeFileSync(ledger, '', { mode: 0o600 });
    chmodSync(ledger, 0o666);
    // In a 0700 directory no one else gets to the file, whatever its mode.
    expect(refusal(dir)).toBeUndefined();
    chmodSync(dir, 0o710);
    expect(refusal(dir)?.message).toBe(
      `${ledger} in --state ${dir} is writable by its group (mode 0666), so prospect does not trust it.`,
    );
    chmodSync(ledger, 0o646);
    expect(refusal(dir)).toBeUndefined();
    chmodSync(dir, 0o701);
    expect(refusal(dir)?.message).toContain('is writable by other users (mode 0646)');
    chmodSync(ledger, 0o664);
    expect(refusal(dir)).toBeUndefined();
  });

  it('judges only the files named, when told which it reads', () => {
    const { dir } = fresh();
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'notes.txt'), '', { mode: 0o666 });
    chmodSync(join(dir, 'notes.txt'), 0o666);
    expect(refusal(dir, ['config.json'])).toBeUndefined();
    expect(refusal(dir)?.message).toContain('notes.txt');
    writeFileSync(join(dir, 'config.json'), '{}');
    chmodSync(join(dir, 'config.json'), 0o646);
    expect(refusal(dir, ['config.json'])?.message).toContain('config.json');
  });

  it('judges where a symlink leads, and the parents on both ways there', () => {
    const target = fresh();
    const link = join(scratchDirSync(), 'state-link');
    symlinkSync(target.dir, link);
    expect(refusal(link)).toBeUndefined();
    chmodSync(target.parent, 0o777);
    expect(refusal(link)?.message).toContain(`the parent ${target.parent} of --state ${link} is writable`);
  });
});

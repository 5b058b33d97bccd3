import { appendFile, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../../io/atomic-file.js';
import { damaged } from '../stored-json.js';
import type { StateDirectory } from './state-directory.js';

/** A line of runs.ndjson: one successful run. */
export const runRecordSchema = z.object({
  run_id: z.string(),
  finished_at: z.string(),
  rows: z.number().int().nonnegative(),
  output: z.string().nullable().optional(),
  only_new: z.boolean().optional(),
  no_match_reason: z.string().optional(),
});
export type RunRecord = z.input<typeof runRecordSchema>;

/** A lead key as leadKey() writes it. */
const LEAD_KEY = /^[0-9a-f]{24}$/;

/** Every lead key an earlier successful run exported (exported/<run>.keys), for --only-new. */
export async function exportedKeys(state: StateDirectory): Promise<Set<string>> {
  const keys = new Set<string>();
  for (const name of await readdir(state.exportedDir)) {
    if (!name.endsWith('.keys')) continue;
    const path = join(state.exportedDir, name);
    for (const key of (await readFile(path, 'utf8')).split('\n')) {
      if (key === '') continue;
      if (!LEAD_KEY.test(key)) {
        throw damaged(
          { name: `the exported-leads file ${path}`, startOver: `Remove ${path} to start over: the leads of that run then count as new again.` },
          `"${key.slice(0, 40)}" is not a lead key`,
        );
      }
      keys.add(key);
    }
  }
  return keys;
}

/** After the output is in place: remember what this run exported, then forget the checkpoint. */
export async function recordSuccess(state: StateDirectory, record: RunRecord): Promise<void> {
  const keys = await readFile(state.keysPath, 'utf8').catch(() => '');
  await writeFileAtomic(join(state.exportedDir, `${record.run_id}.keys`), keys, 0o600);
  await appendFile(state.runsPath, `${JSON.stringify(runRecordSchema.parse(record))}\n`, { mode: 0o600 });
  await state.discardCurrent();
}

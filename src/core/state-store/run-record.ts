import { z } from 'zod';
import type { leadKey } from './lead-key.js';

/** A line of runs.ndjson, and a row of the ledger's runs table: one successful run. */
export const runRecordSchema = z.object({
  run_id: z.string(),
  finished_at: z.string(),
  rows: z.number().int().nonnegative(),
  output: z.string().nullable().optional(),
  /** -o as an absolute path: which file holds this run's leads, wherever the next run starts. */
  output_path: z.string().nullable().optional(),
  only_new: z.boolean().optional(),
  no_match_reason: z.string().optional(),
  /** For `prospect provenance`: the job (--state), the machine, and the licensed dataset of the rows. */
  job: z.string().optional(),
  host: z.string().optional(),
  source: z.unknown().optional(),
});
export type RunRecord = z.input<typeof runRecordSchema>;

/** What a lead key is made of (leadKey's input). */
export type LeadFields = Parameters<typeof leadKey>[0];
export type StoredRunRecord = z.output<typeof runRecordSchema>;

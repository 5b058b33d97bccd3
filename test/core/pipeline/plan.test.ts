/**
 * A pipeline's fingerprint ties a checkpoint to the command that wrote it. --limit changes the calls,
 * never the output (issue 28), so it is not part of it; a checkpoint fingerprinted while it was (with
 * 200, its default then, or the --limit given) still resumes.
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { pipelineOptionsSchema } from '../../../src/core/pipeline/job.js';
import { newCheckpoint } from '../../../src/core/pipeline/state/checkpoint.js';
import { planPipeline } from '../../../src/core/pipeline/plan.js';
import { openRunState } from '../../../src/core/pipeline/run-state.js';
import { StateDirectory } from '../../../src/core/pipeline/state/state-directory.js';
import type { RunContext } from '../../../src/runtime/context.js';
import { scratchDir } from '../../helpers/scratch.js';

const flags = {
  technology: ['Shopify'],
  notTechnology: [],
  employeeRange: [],
  country: [],
  limit: 1000,
  maxAge: '90d',
  stale: 'keep',
  concurrency: 4,
  format: 'csv',
  escapeFormulas: true,
  cache: true,
  cacheTtl: '30d',
};
const ctx = { stdout: { isTTY: false } } as unknown as RunContext;
const plan = (changes: Record<string, unknown> = {}) =>
  planPipeline(ctx, pipelineOptionsSchema.parse({ ...flags, ...changes }), undefined);

describe('the pipeline fingerprint', () => {
  it('leaves --limit out, and still tells apart options that change the output', () => {
    expect(plan({ limit: 5 }).fingerprint).toBe(plan().fingerprint);
    expect(plan({ seniority: 'cxo' }).fingerprint).not.toBe(plan().fingerprint);
  });

  it('accepts the fingerprint a checkpoint got while --limit was in it: the --limit given, or 200 when none was', () => {
    const { parameters, formerFingerprints } = plan({ limit: 500 });
    // As such a checkpoint was fingerprinted: sha256 of its parameters, --limit in its place.
    const then = (limit: number) =>
      createHash('sha256')
        .update(JSON.stringify({ ...parameters, limit }))
        .digest('hex')
        .slice(0, 16);
    expect(Object.keys(parameters).slice(0, 3)).toEqual(['filters', 'seniority', 'limit']);
    expect(formerFingerprints).toEqual([then(500), then(200)]);
  });

  it('a run resumes a checkpoint that holds a former fingerprint, and refuses another', async () => {
    const state = await StateDirectory.open(await scratchDir());
    await writeFile(state.checkpointPath, JSON.stringify(newCheckpoint('former-fingerprint', new Date())));
    const cleanups: Array<() => Promise<void> | void> = [];
    const quiet = {
      reporter: { info: () => {} },
      onCleanup: (task: () => Promise<void> | void) => cleanups.push(task),
    } as unknown as RunContext;
    const cleanUp = async () => {
      for (const task of cleanups.splice(0).reverse()) await task();
    };
    try {
      expect((await openRunState(quiet, state.dir, 'current-fingerprint', ['former-fingerprint'])).resumed).toBe(true);
    } finally {
      await cleanUp();
    }
    try {
      await expect(openRunState(quiet, state.dir, 'current-fingerprint', ['yet-another'])).rejects.toThrow(
        /different command/,
      );
    } finally {
      await cleanUp();
    }
  });
});

import type { RunContext } from '../runtime/context.js';

/** Runs a command body with the shared context; returns the exit code. Provided by src/cli.ts. */
export type CommandRunner = (body: (ctx: RunContext) => Promise<number>) => Promise<void>;

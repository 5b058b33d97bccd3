/**
 * Each flag is declared once (src/options/flags.ts): the command's options and the job's schema are
 * both built from the same list, so they cannot drift apart.
 */
import { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as lists from '../../src/options/command-flags.js';
import * as flags from '../../src/options/flags.js';
import { addFlags, type Flag } from '../../src/options/flag.js';
import { flagShape } from '../../src/core/shared/flags.js';
import { CONFIG_KEYS } from '../../src/config/keys.js';
import { ConfigFileSchema } from '../../src/config/validate.js';
import { PLANS } from '../../src/sandbox/auth.js';

const COMMANDS: Record<string, readonly Flag[]> = {
  companies: lists.COMPANIES_FLAGS,
  contacts: lists.CONTACTS_FLAGS,
  verify: lists.VERIFY_FLAGS,
  pipeline: lists.PIPELINE_FLAGS,
  count: lists.COUNT_FLAGS,
};

describe('a flag declared once', () => {
  it.each(Object.values(flags))('$flags: its name is the key commander gives its value', (flag) => {
    expect(new Option(flag.flags, flag.help).attributeName()).toBe(flag.name);
  });

  it.each(Object.entries(COMMANDS))('%s: the job reads every option the command takes', (_name, list) => {
    const options = addFlags(new Command(), list).options.map((option) => option.attributeName());
    expect(Object.keys(flagShape(list))).toEqual(options);
    expect(new Set(options).size).toBe(options.length);
  });

  it.each(Object.entries(COMMANDS))(
    '%s: what commander gives for no flag is what the schema makes of it',
    (_, list) => {
      const command = addFlags(new Command().exitOverride(), list).action(() => {});
      command.parse([], { from: 'user' });
      const schema = z.object(flagShape(list));
      expect(schema.parse(command.opts())).toEqual(schema.parse({ escapeFormulas: true, cache: true }));
    },
  );

  it('a configurable flag is defaulted by the config key of its name', () => {
    expect(lists.CONFIGURABLE_FLAGS.map((flag) => flag.name).sort()).toEqual(['concurrency', 'format', 'maxAge']);
    for (const flag of lists.CONFIGURABLE_FLAGS) {
      expect(CONFIG_KEYS).toContain(flag.config!.key);
      const example = flag.name === 'maxAge' ? '6m' : flag.name === 'format' ? 'csv' : 8;
      const values = ConfigFileSchema.parse({ [flag.config!.key]: example }) as Record<string, unknown>;
      expect(values[flag.name]).toBe(example);
    }
  });
});

describe("the program's own flags", () => {
  it('--sandbox-plan takes the plans of the sandbox (copied into the table)', () => {
    expect(flags.SANDBOX_PLAN.choices).toEqual(PLANS);
  });

  it('what commander gives for no flag is what GlobalOptions reads: the defaults, nothing else', () => {
    const command = addFlags(new Command().exitOverride(), lists.GLOBAL_FLAGS).action(() => {});
    command.parse([], { from: 'user' });
    expect(command.opts()).toEqual({ sandboxPlan: 'growth', timeout: 30, maxRetries: 5 });
    // A job's schema of the same flags: the defaults, and each absent switch false.
    const switchesOff = { sandbox: false, verbose: false, quiet: false, debug: false };
    expect(z.object(flagShape(lists.GLOBAL_FLAGS)).parse(command.opts())).toEqual({
      ...command.opts(),
      ...switchesOff,
    });
  });
});

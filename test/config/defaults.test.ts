import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { addFlags } from '../../src/options/flag.js';
import { CONCURRENCY, FORMAT, MAX_AGE, OUTPUT } from '../../src/options/flags.js';
import { applyConfigDefaults, applyConfigFileDefaults } from '../../src/config/defaults.js';
import type { ConfigValues } from '../../src/config/store.js';
import { ExitCode } from '../../src/exit-codes.js';
import { scratchDir } from '../helpers/scratch.js';

interface Seen {
  opts: Record<string, unknown>;
  sources: Record<string, string | undefined>;
}

/** A program shaped like ours: `contacts` has the three flags (ours, with their defaults), `config` has none. */
function program(
  hook: (command: Command) => void | Promise<void>,
  errors: string[] = [],
): { program: Command; seen: Seen[] } {
  const seen: Seen[] = [];
  const record = (_opts: unknown, command: Command) => {
    const sources = Object.fromEntries(
      ['maxAge', 'concurrency', 'format'].map((name) => [name, command.getOptionValueSource(name)]),
    );
    seen.push({ opts: command.opts(), sources });
  };
  const root = new Command('prospect')
    .exitOverride()
    .configureOutput({ writeErr: (text) => errors.push(text), writeOut: () => {} });
  addFlags(root.command('contacts'), [MAX_AGE, CONCURRENCY, FORMAT, OUTPUT]).action(record);
  root.command('config').option('--other <x>', 'unrelated').action(record);
  root.hook('preAction', (_program, actionCommand) => hook(actionCommand));
  return { program: root, seen };
}

async function runWith(values: ConfigValues, args: string[]): Promise<Seen> {
  const { program: root, seen } = program((command) => applyConfigDefaults(command, values));
  await root.parseAsync(args, { from: 'user' });
  return seen[0]!;
}

describe('applyConfigDefaults: flag > config file > built-in default', () => {
  it('built-in defaults when the config says nothing', async () => {
    const { opts, sources } = await runWith({}, ['contacts']);
    expect(opts).toMatchObject({ maxAge: '90d', concurrency: 4 });
    expect(opts.format).toBeUndefined();
    expect(sources).toEqual({ maxAge: 'default', concurrency: 'default', format: undefined });
  });

  it('the config file over the built-in default', async () => {
    const { opts, sources } = await runWith({ maxAge: '1y', concurrency: 8, format: 'json' }, ['contacts']);
    expect(opts).toMatchObject({ maxAge: '1y', concurrency: 8, format: 'json' });
    expect(sources).toEqual({ maxAge: 'config', concurrency: 'config', format: 'config' });
  });

  it('a flag over the config file', async () => {
    const { opts, sources } = await runWith({ maxAge: '1y', concurrency: 8, format: 'json' }, [
      'contacts',
      '--max-age',
      '30d',
      '--concurrency',
      '2',
      '--format',
      'csv',
    ]);
    expect(opts).toMatchObject({ maxAge: '30d', concurrency: 2, format: 'csv' });
    expect(sources).toEqual({ maxAge: 'cli', concurrency: 'cli', format: 'cli' });
  });

  it('each flag on its own: a given flag wins, the others still come from the config', async () => {
    const { opts } = await runWith({ maxAge: '1y', concurrency: 8 }, ['contacts', '--max-age', '30d']);
    expect(opts).toMatchObject({ maxAge: '30d', concurrency: 8 });
  });

  it('-o FILE decides the format by its extension, as without a config file', async () => {
    const { opts } = await runWith({ format: 'json', maxAge: '1y' }, ['contacts', '-o', 'leads.csv']);
    expect(opts.format).toBeUndefined();
    expect(opts.maxAge).toBe('1y');
  });

  it('leaves commands without those flags alone', async () => {
    const { program: root, seen } = program((command) =>
      applyConfigDefaults(command, { maxAge: '1y', format: 'json' }),
    );
    await root.parseAsync(['config'], { from: 'user' });
    expect(seen[0]!.opts).toEqual({});
  });
});

describe('applyConfigFileDefaults (the preAction hook)', () => {
  async function configDir(content: string): Promise<NodeJS.ProcessEnv> {
    const dir = await scratchDir('prospect-defaults-');
    writeFileSync(join(dir, 'config.json'), content);
    return { PROSPECT_CONFIG_DIR: dir };
  }

  it('reads the file named by the environment', async () => {
    const env = await configDir('{"max-age": "2y", "format": "ndjson"}');
    const { program: root, seen } = program((command) => applyConfigFileDefaults(command, env));
    await root.parseAsync(['contacts'], { from: 'user' });
    expect(seen[0]!.opts).toMatchObject({ maxAge: '2y', format: 'ndjson', concurrency: 4 });
  });

  it('an invalid value stops the run as a usage error (exit 2) naming the file, before the action', async () => {
    const env = await configDir('{"concurrency": 99}');
    const errors: string[] = [];
    const { program: root, seen } = program((command) => applyConfigFileDefaults(command, env), errors);
    const error = await root.parseAsync(['contacts'], { from: 'user' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CommanderError);
    expect((error as CommanderError).exitCode).toBe(ExitCode.usage);
    expect(seen).toHaveLength(0);
    expect(errors.join('')).toContain(
      `prospect: the config file ${join(env.PROSPECT_CONFIG_DIR!, 'config.json')} has an invalid concurrency`,
    );
    expect(errors.join('')).toContain('prospect config unset concurrency');
  });

  it('a corrupt file stops the run with its path', async () => {
    const env = await configDir('{nope');
    const errors: string[] = [];
    const { program: root } = program((command) => applyConfigFileDefaults(command, env), errors);
    await expect(root.parseAsync(['contacts'], { from: 'user' })).rejects.toMatchObject({ exitCode: ExitCode.usage });
    expect(errors.join('')).toMatch(/config\.json is unusable: it is not valid JSON/);
  });

  it('is not read when every flag was given, or the command has none (so `config set` can repair it)', async () => {
    const env = await configDir('{nope');
    const { program: root, seen } = program((command) => applyConfigFileDefaults(command, env));
    await root.parseAsync(['config'], { from: 'user' });
    await root.parseAsync(['contacts', '--max-age', '1d', '--concurrency', '1', '-f', 'csv'], { from: 'user' });
    expect(seen).toHaveLength(2);
  });
});

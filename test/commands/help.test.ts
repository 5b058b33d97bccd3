/**
 * Help that teaches: every command explains itself with real examples, `prospect help` works as
 * commander's does plus topics, and mistakes get the closest suggestion with exit 2.
 */
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_DOCS } from '../../src/exit-codes.js';
import { runCli } from '../helpers/cli.js';

/** The command names in the "Commands:" section of a help text. */
function commandsIn(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? '';
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((match) => match[1]!);
}

const exampleLines = (help: string) => help.split('\n').filter((line) => line.startsWith('  $ '));

const topLevel = await runCli(['--help']);
const commands = commandsIn(topLevel.stdout);
const configHelp = await runCli(['config', '--help']);
const configCommands = commandsIn(configHelp.stdout).filter((name) => name !== 'help');
const everyCommand = [...commands.filter((name) => name !== 'help').map((name) => [name]), ...configCommands.map((name) => ['config', name]), ['help']];

describe('--help of every command', () => {
  it('finds the commands the issue names', () => {
    expect(commands).toEqual(expect.arrayContaining(['companies', 'contacts', 'verify', 'pipeline', 'sandbox', 'config', 'completion', 'help']));
    expect(configCommands).toEqual(['set', 'get', 'unset', 'list', 'path']);
  });

  it.each(everyCommand)('prospect %s %s --help: a description and at least two examples', async (...path) => {
    const help = await runCli([...path, '--help']);
    expect(help.code).toBe(0);
    expect(help.stderr).toBe('');
    const [usage, blank, description] = help.stdout.split('\n');
    expect(usage).toMatch(new RegExp(`^Usage: prospect ${path.join(' ')}\\b`));
    expect(blank).toBe('');
    expect(description?.trim().length).toBeGreaterThan(20);
    const examples = exampleLines(help.stdout);
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) expect(example).toMatch(/^ {2}\$ (\S+=\S+ )*(prospect|printf|source|curl|"\$EDITOR"|PROSPECT_\w+=)/);
  });

  it('the top-level help lists the exit codes', () => {
    for (const { code } of EXIT_CODE_DOCS) expect(topLevel.stdout).toMatch(new RegExp(`^ +${code}  `, 'm'));
  });
});

describe('prospect help', () => {
  it('exit-codes lists every documented code with its meaning', async () => {
    const help = await runCli(['help', 'exit-codes']);
    expect(help.code).toBe(0);
    for (const { code, meaning } of EXIT_CODE_DOCS) expect(help.stdout).toContain(`${String(code).padStart(3)}  ${meaning}`);
  });

  it.each([[['companies']], [['pipeline']], [['config']], [['config', 'set']], [['completion']]])('help %j is the same text as --help', async (path) => {
    const viaHelp = await runCli(['help', ...path]);
    const viaFlag = await runCli([...path, '--help']);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
  });

  it('with no topic is the top-level help', async () => {
    expect((await runCli(['help'])).stdout).toBe(topLevel.stdout);
  });

  it('commander\'s own help command still works under config', async () => {
    const viaHelp = await runCli(['config', 'help', 'set']);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe((await runCli(['config', 'set', '--help'])).stdout);
  });

  it('an unknown topic is exit 2 with the closest one', async () => {
    const typo = await runCli(['help', 'exit-code']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain("unknown help topic 'exit-code'\n(Did you mean exit-codes?)");
    const nested = await runCli(['help', 'config', 'lst']);
    expect(nested.code).toBe(2);
    expect(nested.stderr).toContain('(Did you mean list?)');
  });
});

describe('mistakes suggest the closest command or flag (exit 2)', () => {
  it.each([
    [['comapnies'], "unknown command 'comapnies'", 'Did you mean companies?'],
    [['pipline'], "unknown command 'pipline'", 'Did you mean pipeline?'],
    [['config', 'lst'], "unknown command 'lst'", 'Did you mean list?'],
    [['companies', '--technolgy', 'Shopify'], "unknown option '--technolgy'", 'Did you mean --technology?'],
    [['contacts', '--seniorty', 'cxo'], "unknown option '--seniorty'", 'Did you mean --seniority?'],
    [['--verbos', 'companies'], "unknown option '--verbos'", 'Did you mean --verbose?'],
    [['completion', 'ksh'], "command-argument value 'ksh' is invalid for argument 'shell'", 'Allowed choices are bash, zsh, fish.'],
  ])('prospect %j', async (args, error, suggestion) => {
    const result = await runCli(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(error);
    expect(result.stderr).toContain(suggestion);
  });
});

/**
 * Help that teaches: every command explains itself with real examples, `prospect help` works as
 * commander's does plus topics, and mistakes get the closest suggestion with exit 2.
 *
 * The top-level help is spawned, to show the binary printing it with exit 0, and so is `count --help`
 * on a real pty. Every other text, mistake and exit code runs the same main() in process
 * (runInProcess), which prints the same bytes to a pipe, with the same exit code, without a process
 * start.
 */
import { describe, expect, it } from 'vitest';
import { EXIT_CODE_DOCS } from '../../src/exit-codes.js';
import { runCli, runInProcess } from '../helpers/cli.js';

/** The command names in the "Commands:" section of a help text. */
function commandsIn(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? '';
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((match) => match[1]!);
}

const TOPICS = ['exit-codes', 'formats', 'configuration', 'scheduling'];

const exampleLines = (help: string) => help.split('\n').filter((line) => line.startsWith('  $ '));

// Spawned: this file's one run through a real process on a pipe.
const topLevel = await runCli(['--help']);
const commands = commandsIn(topLevel.stdout);
const configHelp = await runInProcess(['config', '--help']);
const configCommands = commandsIn(configHelp.stdout).filter((name) => name !== 'help');
const everyCommand = [
  ...commands.filter((name) => name !== 'help').map((name) => [name]),
  ...configCommands.map((name) => ['config', name]),
  ['help'],
];

describe('a bare prospect', () => {
  it('prints the top-level help on stdout and exits 0, as gh does', async () => {
    const bare = await runInProcess([]);
    expect(bare.code).toBe(0);
    expect(bare.stderr).toBe('');
    expect(bare.stdout).toBe(topLevel.stdout);
  });
});

describe('--help of every command', () => {
  it('finds the commands the issue names', () => {
    expect(commands).toEqual(
      expect.arrayContaining([
        'companies',
        'contacts',
        'verify',
        'pipeline',
        'state',
        'sandbox',
        'config',
        'completion',
        'help',
      ]),
    );
    expect(configCommands).toEqual(['set', 'get', 'unset', 'list', 'path']);
  });

  it.each(everyCommand)('prospect %s %s --help: a description and at least two examples', async (...path) => {
    const help = await runInProcess([...path, '--help']);
    expect(help.code).toBe(0);
    expect(help.stderr).toBe('');
    const [usage, blank, description] = help.stdout.split('\n');
    expect(usage).toMatch(new RegExp(`^Usage: prospect ${path.join(' ')}\\b`));
    expect(blank).toBe('');
    expect(description?.trim().length).toBeGreaterThan(20);
    const examples = exampleLines(help.stdout);
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples)
      expect(example).toMatch(/^ {2}\$ (\S+=\S+ )*(prospect|printf|source|curl|"\$EDITOR"|PROSPECT_\w+=)/);
    // A line continuation lost in the source (`\` instead of `\\`) runs two lines into one.
    for (const line of help.stdout.split('\n').filter((text) => text.startsWith('  ')))
      expect(line.trim(), line).not.toMatch(/\S {3,}-/);
  });

  it('the top-level help has an example of each of the four main jobs and lists the help topics', () => {
    const jobs = exampleLines(topLevel.stdout).map((line) => line.split(' ')[4]);
    expect(jobs).toEqual(expect.arrayContaining(['companies', 'contacts', 'verify', 'pipeline']));
    for (const topic of TOPICS) expect(topLevel.stdout).toMatch(new RegExp(`^ {2}${topic} +\\S`, 'm'));
  });

  it('descriptions are paragraphs wrapped once: within 80 columns, no line broken short in mid-paragraph', async () => {
    for (const path of [['companies'], ['contacts'], ['verify'], ['pipeline']]) {
      const help = await runInProcess([...path, '--help']);
      const description = help.stdout.split('\n\n')[1]!.split('\n');
      for (const line of description) expect(line.length).toBeLessThanOrEqual(80);
      // Wrapped once at 80, every line but the last is filled to within a word of the width.
      for (const line of description.slice(0, -1)) expect(line.length, line).toBeGreaterThan(60);
    }
  });

  it('shows no empty default and does not ask for a lower-case country', async () => {
    const help = await runInProcess(['companies', '--help']);
    expect(help.stdout).not.toContain('(default: [])');
    expect(help.stdout).toMatch(/-t, --technology <name> +a technology/);
    expect(help.stdout).not.toMatch(/lower-case/);
  });
});

describe('prospect help', () => {
  it('exit-codes lists every documented code with its meaning', async () => {
    const help = await runInProcess(['help', 'exit-codes']);
    expect(help.code).toBe(0);
    // Each meaning is wrapped beside its code: compare with the line breaks undone.
    const text = help.stdout.replace(/\n {7}/g, ' ');
    for (const { code, meaning } of EXIT_CODE_DOCS) expect(text).toContain(`${String(code).padStart(3)}  ${meaning}`);
  });

  it('scheduling names every exit code with the meaning of src/exit-codes.ts (one source, no text of its own)', async () => {
    const help = await runInProcess(['help', 'scheduling']);
    const text = help.stdout.replace(/\s*\n\s*/g, ' ');
    for (const { code, short } of EXIT_CODE_DOCS) expect(text).toContain(`${code} ${short}`);
    expect(text).toContain('3 nothing matched (an empty result)');
    expect(text).not.toContain('would not answer');
  });

  it.each([[['companies']], [['pipeline']], [['config']], [['config', 'set']], [['completion']]])(
    'help %j is the same text as --help',
    async (path) => {
      const viaHelp = await runInProcess(['help', ...path]);
      const viaFlag = await runInProcess([...path, '--help']);
      expect(viaHelp.code).toBe(0);
      expect(viaHelp.stdout).toBe(viaFlag.stdout);
    },
  );

  it.each(TOPICS.slice(1))('%s is a topic with a title and text', async (topic) => {
    const help = await runInProcess(['help', topic]);
    expect(help.code).toBe(0);
    expect(help.stderr).toBe('');
    expect(help.stdout.split('\n').length).toBeGreaterThan(4);
    for (const line of help.stdout.split('\n'))
      if (!line.startsWith('  ')) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it('an unknown word with no close match lists the topics and the commands (exit 2)', async () => {
    const help = await runInProcess(['help', 'nonsense']);
    expect(help.code).toBe(2);
    expect(help.stdout).toBe('');
    expect(help.stderr).toBe(
      `prospect: unknown help topic 'nonsense'\nTopics: ${TOPICS.join(', ')}.\nCommands: companies, contacts, verify, pipeline, count, doctor, forget, provenance, state, sandbox, config, completion.\n`,
    );
  });

  it('with no topic is the top-level help', async () => {
    expect((await runInProcess(['help'])).stdout).toBe(topLevel.stdout);
  });

  it("commander's own help command still works under config", async () => {
    const viaHelp = await runInProcess(['config', 'help', 'set']);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe((await runInProcess(['config', 'set', '--help'])).stdout);
  });

  it('an unknown topic is exit 2 with the closest one', async () => {
    const typo = await runInProcess(['help', 'exit-code']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe("prospect: unknown help topic 'exit-code'\nDid you mean exit-codes?\n");
    const nested = await runInProcess(['help', 'config', 'lst']);
    expect(nested.code).toBe(2);
    expect(nested.stderr).toContain('\nDid you mean list?\n');
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
    [
      ['completion', 'ksh'],
      "command-argument value 'ksh' is invalid for argument 'shell'.",
      'Allowed choices are bash, zsh, fish.',
    ],
  ])('prospect %j', async (args, error, suggestion) => {
    const result = await runInProcess(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    // One error style: what happened, in prospect's voice, then what to do.
    expect(result.stderr).toBe(`prospect: ${error}\n${suggestion}\n`);
  });

  it('a bad value says what happened, then what to do', async () => {
    const result = await runInProcess(['contacts', '--limit', '5000', 'acme.com']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "prospect: option '--limit <n>' argument '5000' is invalid.\n--limit takes a whole number from 1 to 1000.\n",
    );
  });

  it('a missing argument says where the usage is', async () => {
    const result = await runInProcess(['companies', '-t']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "prospect: option '-t, --technology <name>' argument missing\nRun 'prospect companies --help' for usage.\n",
    );
  });
});

/** The words of a text, in order, without the " \" that continues a wrapped example. */
/** The words of a help text, less what wrapping adds: an example's " \\" and a comment's "#" on its next lines. */
const wordsOf = (text: string) => {
  let joined = text;
  for (let before = ''; before !== joined;) {
    before = joined;
    joined = joined.replace(/^(\s*#.*)\n\s*# /m, '$1 ');
  }
  return joined.split(/\s+/).filter((word) => word !== '' && word !== '\\');
};
/** A crontab entry: no " \\" can continue it, so it is left for the terminal to wrap (issue 43). */
const CRONTAB_ENTRY = /^\s*(?:@[a-z]+|(?:[\d*][\d*,/-]*\s+){4}[\d*][\d*,/-]*)\s+\S/;

describe('help on a terminal of any width from 40 columns (issue 36)', () => {
  const texts = [['--help'], ...everyCommand.map((path) => [...path, '--help']), ...TOPICS.map((t) => ['help', t])];

  it('on a real pty at 60 columns, count --help: no line wider, the same words as at full width', async () => {
    const { SCRIPT, screenLines, startOnTerminal } = await import('../helpers/terminal.js');
    const { finishCli } = await import('../helpers/cli.js');
    if (SCRIPT.skip) return expect(SCRIPT.skip).toBe(true);
    const run = await finishCli(startOnTerminal(['count', '--help'], { columns: 60, rows: 40 }));
    expect(run.code).toBe(0);
    const lines = screenLines(run.stdout);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(60);
    const wide = await runInProcess(['count', '--help'], { terminal: { columns: 1000, rows: 40 } });
    expect(wordsOf(lines.join('\n'))).toEqual(wordsOf(wide.stdout));
    // The description is one paragraph, not lines broken where the source broke them.
    expect(lines.join(' ')).toMatch(/--by +breaks +the +set +down/);
  });

  /** Each text at full width, run once for all the widths below. */
  const wideTexts = new Map<string, ReturnType<typeof runInProcess>>();
  const atFullWidth = (args: string[]) => {
    if (!wideTexts.has(args.join(' ')))
      wideTexts.set(args.join(' '), runInProcess(args, { terminal: { columns: 1000, rows: 40 } }));
    return wideTexts.get(args.join(' '))!;
  };

  it.each([40, 60, 80, 120, 200])(
    'at %i columns every help text: no line wider, no word broken (in process)',
    async (columns) => {
      for (const args of texts) {
        const wide = await atFullWidth(args);
        const run = await runInProcess(args, { terminal: { columns, rows: 40 } });
        expect(run.code, args.join(' ')).toBe(0);
        // Only a word that alone is wider than an example's continuation line may pass the edge:
        // the terminal cuts it there, as it would cut it anywhere (PROSPECT_BASE_URL=http://… at 40).
        for (const line of run.stdout.split('\n').filter((text) => text.length > columns && !CRONTAB_ENTRY.test(text)))
          expect(
            wordsOf(line).filter((word) => word.length > columns - 8),
            `${args.join(' ')}: ${line}`,
          ).toHaveLength(1);
        expect(wordsOf(run.stdout), args.join(' ')).toEqual(wordsOf(wide.stdout));
      }
    },
  );

  it('a wrapped example still runs as written: continued with " \\" and its quoted words whole', async () => {
    const run = await runInProcess(['--help'], { terminal: { columns: 40, rows: 40 } });
    const examples = run.stdout.split('\nExamples:\n')[1]!.split('\n\n')[0]!;
    const joined = examples.replace(/ \\\n\s+/g, ' ');
    expect(exampleLines(`${joined}\n`)).toEqual(exampleLines(topLevel.stdout));
  });
});

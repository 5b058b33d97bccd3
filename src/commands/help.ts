import { Help, type Command } from 'commander';
import { EXIT_CODE_DOCS, exitCodesInOneLine } from '../exit-codes.js';
import { declareCommand, defineCommand, helpWidth } from './command-tree.js';
import { editDistance } from '../util/text.js';
import { wrapHelpText } from '../ui/wrap.js';

/**
 * A help topic: a title, then paragraphs wrapped once to the terminal by commander's own wrapper.
 * A paragraph that starts with two spaces is an example, shown as written; a list of [term, text]
 * has its texts wrapped beside their terms.
 */
type Block = string | ReadonlyArray<readonly [string, string]>;

interface Topic {
  summary: string;
  text: () => Block[];
}

const TOPICS: Readonly<Record<string, Topic>> = {
  'exit-codes': { summary: 'what each exit status means', text: exitCodeParagraphs },
  formats: { summary: 'csv, json, ndjson and table; how a table fits the terminal', text: formatParagraphs },
  configuration: { summary: 'the config file, the environment and which wins', text: configurationParagraphs },
  scheduling: { summary: 'running prospect from cron or CI', text: schedulingParagraphs },
};

/**
 * Replaces commander's implicit `help` command (a registered command named "help" switches it
 * off) to add topics such as `prospect help exit-codes`, while `prospect help <command> [sub]`
 * shows the same text as `prospect <command> [sub] --help`. Register it last: it lists its siblings.
 */
export function registerHelpCommand(program: Command): void {
  declareCommand(
    program,
    'help',
    { summary: 'help for a command, or a topic: exit codes, formats, configuration, scheduling' },
    (command) =>
      command
        .argument('[topic...]', `a command (e.g. "config set") or a topic: ${topicNames().join(', ')}`)
        .description(
          `Show the help of a command (the same text as its --help), or one of the topics: ${topicNames().join(', ')}.`,
        )
        .addHelpText(
          'after',
          `
Examples:
  $ prospect help pipeline
  $ prospect help config set
  $ prospect help formats`,
        )
        .action((topic: string[], _flags: unknown, command: Command) =>
          showHelp(command.parent ?? command, topic, command),
        ),
  );
}

/** What `prospect --help` ends with: the four main jobs, then where to read more. */
export function rootHelpText(): string {
  return `
Examples:
  $ prospect companies -t Shopify --country "united states" -o shopify.csv
  $ prospect contacts --domains-file shopify.csv --seniority cxo,vp -o contacts.csv
  $ prospect verify --file contacts.csv --verify-budget 200 -o verified.csv
  $ prospect pipeline -t Shopify --seniority cxo,vp --stale verify --verify-budget 500 --state ./leads -o leads.csv

Help topics (prospect help <topic>):
${topicList()}

Try it without a key: prospect --sandbox companies -t Shopify --max 20`;
}

function topicNames(): string[] {
  return Object.keys(TOPICS);
}

function topicList(): string {
  const width = Math.max(...topicNames().map((name) => name.length));
  return Object.entries(TOPICS)
    .map(([name, topic]) => `  ${name.padEnd(width)}  ${topic.summary}`)
    .join('\n');
}

function showHelp(root: Command, words: string[], helpCommand: Command): void {
  const [first] = words;
  const topic = first === undefined ? undefined : TOPICS[first];
  if (topic !== undefined && words.length === 1) {
    const width = helpWidth(process.stdout);
    const text = render(topic.text(), width ?? 80);
    process.stdout.write(width === undefined ? text : wrapHelpText(text, width));
    return;
  }
  let target = root;
  for (const word of words) {
    const next = defineCommand(target).commands.find(
      (command) => command.name() === word || command.aliases().includes(word),
    );
    if (next === undefined) return unknownTopic(helpCommand, target, word);
    target = defineCommand(next);
  }
  target.outputHelp();
}

/** A usage error (exit 2) with the closest command or topic, as commander does for commands, or the list of both. */
function unknownTopic(helpCommand: Command, parent: Command, word: string): never {
  const commands = parent.commands.map((command) => command.name()).filter((name) => name !== 'help');
  const topics = parent.parent ? [] : topicNames();
  const closest = closestWord(word, [...commands, ...topics]);
  const todo = closest
    ? `(Did you mean ${closest}?)`
    : [topics.length > 0 ? `Topics: ${topics.join(', ')}.` : '', `Commands: ${commands.join(', ')}.`]
        .filter(Boolean)
        .join('\n');
  helpCommand.error(`error: unknown help topic '${word}'\n${todo}`, { exitCode: 2, code: 'commander.unknownCommand' });
}

/**
 * Blocks to text: prose wrapped to `width` with commander's wrapper, examples as written,
 * lists with hanging indents.
 */
function render(paragraphs: Block[], width: number): string {
  const help = new Help();
  // Wrapped at any width: commander's default stops below 40 columns, and the terminal then breaks words.
  help.minWidthToWrap = 1;
  const blocks = paragraphs.map((block) => {
    if (typeof block === 'string') return /^\s/.test(block) ? block : help.boxWrap(block, width);
    const termWidth = Math.max(...block.map(([term]) => term.length));
    const indent = ' '.repeat(termWidth + 4);
    return block
      .map(
        ([term, text]) =>
          `  ${term.padEnd(termWidth)}  ${help.boxWrap(text, width - indent.length).replaceAll('\n', `\n${indent}`)}`,
      )
      .join('\n');
  });
  // A title ("Exit codes:") sits right above its list.
  return `${blocks.join('\n\n').replace(/:\n\n/g, ':\n')}\n`;
}

function exitCodeParagraphs(): Block[] {
  return ['Exit codes:', EXIT_CODE_DOCS.map(({ code, meaning }) => [String(code).padStart(3), meaning] as const)];
}

function formatParagraphs(): Block[] {
  return [
    'Output formats',
    '--format (-f) chooses; without it, the extension of -o does (.csv, .json, .ndjson or .jsonl); without either, ' +
      'a terminal gets a table and a pipe or a file gets CSV. The config key "format" changes that default.',
    [
      [
        'csv',
        "a header row, then one row per record (LF line ends). Cells that start with = + - @ get a leading ' " +
          '(--no-escape-formulas turns it off).',
      ],
      ['json', '{"data":[...],"meta":{...}}, written as rows arrive; meta says where the data came from.'],
      ['ndjson', 'one JSON object per line, nothing else: for jq and for streaming.'],
      ['table', 'for people at a terminal (below).'],
    ],
    'A table is one table for the whole result. Its column widths are set from the first screenful of rows (every ' +
      'row when the result is smaller); the header is drawn once and the rows stream on under it. A column empty ' +
      'in every one of those rows is not drawn. The email and the name come first, and an address of up to 40 ' +
      'characters is never cut. It fits the terminal: when it is too wide, cells are cut with "…" in this order: ' +
      'technologies, then titles, company and person names, industry, department, source and linkedin_url; then ' +
      'headers wider than their cells; then the widest other column. Only when the columns cannot fit at all are ' +
      'whole columns left out, the least needed first, and a line under the table says which. A wide terminal ' +
      'shows more: industry, phone, technologies, department and linkedin_url where they fit. --columns picks the ' +
      'columns yourself.',
    `Into a file or a pipe (--format table -o report.txt, or | less), a table is 160 columns wide, with its widths ` +
      `set from its first 100 rows. A terminal that reports no size (0 columns under some CI runners, \`script\` or ` +
      `\`docker exec -t\`) is taken as 80×24.`,
    'The progress line (a bar with done/total, the rate and an ETA) and every message go to stderr, so data on ' +
      'stdout stays clean; the line is drawn only on a terminal, never with -q or TERM=dumb.',
  ];
}

function configurationParagraphs(): Block[] {
  return [
    'Configuration',
    'A flag wins over the environment (PROSPECT_API_KEY, PROSPECT_BASE_URL, PROSPECT_CURSOR_PARAM), which wins ' +
      'over the config file, which wins over the default. The config file lives in your user config directory, ' +
      'readable by you alone; PROSPECT_CONFIG_DIR moves it, and PROSPECT_CACHE_DIR moves the verification cache.',
    '  $ prospect config list\n  $ prospect config set max-age 6m\n  $ printf %s "$KEY" | prospect config set ' +
      'api-key\n  $ prospect config path',
    'config list shows every key, the value in effect and where it comes from.',
    'The API key is read from stdin or a hidden prompt, never from the command line, and it is never printed: ' +
      'config get and list show its last 4 characters. NO_COLOR turns colours off. See prospect config --help for ' +
      'the keys.',
  ];
}

function schedulingParagraphs(): Block[] {
  return [
    'Scheduling (cron, CI)',
    'Off a terminal prospect is quiet: stdout carries only data and stderr only errors and the warnings that ' +
      'change what the output means (skipped inputs, cut domains, unchecked addresses, a stopped --max), one line ' +
      'per kind. -q silences the warnings too; -v adds the summaries a terminal shows. No progress line is drawn, ' +
      'and no question is asked.',
    '  $ prospect pipeline -t Shopify --seniority cxo,vp --state /var/lib/prospect --only-new -o "leads-$(date ' +
      '+%F).csv" --summary run.json',
    'With -o the file appears whole or not at all. --summary FILE writes a JSON record of the run, on success and ' +
      'on failure, with the exit code. With --state DIR a run that dies resumes where it stopped when run again, ' +
      'pays for no verification twice, and --only-new writes only the leads no earlier run exported; a second run on ' +
      'the same state exits 6 at once instead of waiting.',
    `The exit status says what happened (prospect help exit-codes): ${exitCodesInOneLine()}.`,
  ];
}

/** The candidate at the smallest edit distance, if it is close enough to be a typo (as commander judges it: 40%). */
function closestWord(word: string, candidates: readonly string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    const similarity = (Math.max(word.length, candidate.length) - distance) / Math.max(word.length, candidate.length);
    if (similarity > 0.4 && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

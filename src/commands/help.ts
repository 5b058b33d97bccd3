import type { Command } from 'commander';
import { EXIT_CODE_DOCS } from '../exit-codes.js';

/** Help topics that are not commands. */
const TOPICS: Readonly<Record<string, () => string>> = {
  'exit-codes': exitCodesText,
};

/**
 * Replaces commander's implicit `help` command (a registered command named "help" switches it
 * off) to add topics such as `prospect help exit-codes`, while `prospect help <command> [sub]`
 * shows the same text as `prospect <command> [sub] --help`. Register it last: it lists its siblings.
 */
export function registerHelpCommand(program: Command): void {
  program
    .command('help')
    .argument('[topic...]', `a command (e.g. "config set") or a topic: ${Object.keys(TOPICS).join(', ')}`)
    .description('show help for a command, or a topic: exit-codes')
    .addHelpText(
      'after',
      `
Examples:
  $ prospect help pipeline
  $ prospect help config set
  $ prospect help exit-codes`,
    )
    .action((topic: string[], _flags: unknown, command: Command) => showHelp(command.parent ?? command, topic, command));
}

export function exitCodesText(): string {
  const lines = EXIT_CODE_DOCS.map(({ code, meaning }) => `  ${String(code).padStart(3)}  ${meaning}`);
  return `Exit codes:\n${lines.join('\n')}\n`;
}

function showHelp(root: Command, words: string[], helpCommand: Command): void {
  const [first] = words;
  const topic = first === undefined ? undefined : TOPICS[first];
  if (topic !== undefined && words.length === 1) {
    process.stdout.write(topic());
    return;
  }
  let target = root;
  for (const word of words) {
    const next = target.commands.find((command) => command.name() === word || command.aliases().includes(word));
    if (next === undefined) return unknownTopic(helpCommand, target, word);
    target = next;
  }
  target.outputHelp();
}

/** Commander-style error (exit 2) with the closest command or topic, as commander does for commands. */
function unknownTopic(helpCommand: Command, parent: Command, word: string): never {
  const candidates = [...parent.commands.map((command) => command.name()), ...(parent.parent ? [] : Object.keys(TOPICS))];
  const closest = closestWord(word, candidates);
  helpCommand.error(`error: unknown help topic '${word}'${closest ? `\n(Did you mean ${closest}?)` : ''}`, {
    exitCode: 2,
    code: 'commander.unknownCommand',
  });
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

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * `prospect completion bash|zsh|fish`: the scripts load in their shell and complete what the
 * program has. bash and fish complete real command lines; zsh loads the script under compinit and
 * registers it. zsh and fish are skipped with a reason where not installed, and fail in CI.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../src/config/keys.js';
import { runCli, runShell, scratchDir } from '../helpers/cli.js';
import { findProgram, type Program } from '../helpers/programs.js';

const FIXED_VALUES = {
  '--seniority': ['cxo', 'vp', 'director', 'manager', 'staff'],
  '--format': ['csv', 'json', 'ndjson', 'table', 'xlsx'],
  '--stale': ['keep', 'drop', 'verify'],
  '--sandbox-plan': ['free', 'starter', 'growth', 'scale'],
};

const SHELLS: Record<'zsh' | 'fish', Program> = {
  zsh: findProgram('zsh'),
  fish: findProgram('fish'),
};

const scripts: Record<string, string> = {};
let dir: string;
let commands: string[];

beforeAll(async () => {
  dir = await scratchDir('prospect-completion-');
  for (const shell of ['bash', 'zsh', 'fish']) {
    const run = await runCli(['completion', shell]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    scripts[shell] = run.stdout;
    writeFileSync(join(dir, `prospect.${shell}`), run.stdout);
  }
  const help = (await runCli(['--help'])).stdout;
  const section = help.split(/^Commands:$/m)[1]?.split(/^\S/m)[0] ?? '';
  commands = [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((match) => match[1]!);
});

/** What the bash completion offers for a command line; the last word is the one being completed. */
function bashComplete(words: string[]): string[] {
  const script = `
source ${JSON.stringify(join(dir, 'prospect.bash'))}
COMP_WORDS=(${words.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ')})
COMP_CWORD=$((\${#COMP_WORDS[@]} - 1))
COMP_LINE="\${COMP_WORDS[*]}"
_prospect
printf '%s\\n' "\${COMPREPLY[@]}"
`;
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', script], { encoding: 'utf8', cwd: dir });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter((line) => line !== '');
}

describe('bash', () => {
  it('the script is valid bash (bash -n)', () => {
    const check = spawnSync('bash', ['-n', join(dir, 'prospect.bash')], { encoding: 'utf8' });
    expect(check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('source <(prospect completion bash) registers it: complete -p prospect', async () => {
    const result = await runShell('source <(eval "$PROSPECT completion bash") && complete -p prospect');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('complete -F _prospect prospect');
  });

  it('completes every command', () => {
    expect(commands.length).toBeGreaterThanOrEqual(8);
    expect(bashComplete(['prospect', ''])).toEqual(commands);
    expect(bashComplete(['prospect', 'co'])).toEqual(['companies', 'contacts', 'count', 'config', 'completion']);
  });

  it('completes the flags of a command and the global ones', () => {
    const flags = bashComplete(['prospect', 'contacts', '--']);
    expect(flags).toEqual(
      expect.arrayContaining([
        '--seniority',
        '--max-age',
        '--stale',
        '--format',
        '--output',
        '--domains-file',
        '--debug',
        '--sandbox',
        '--help',
      ]),
    );
    expect(flags).not.toContain('--technology');
    expect(bashComplete(['prospect', 'companies', '-t', 'Shopify', '--te'])).toEqual(['--technology']);
  });

  it.each([
    [['prospect', 'companies', '--format', ''], FIXED_VALUES['--format']],
    [['prospect', 'pipeline', '-f', 'n'], ['ndjson']],
    [['prospect', 'pipeline', '--stale', ''], FIXED_VALUES['--stale']],
    [['prospect', 'contacts', '--seniority', ''], FIXED_VALUES['--seniority']],
    [['prospect', '--sandbox-plan', ''], FIXED_VALUES['--sandbox-plan']],
    [['prospect', '--sandbox', '--sandbox-plan', 'st'], ['starter']],
    [['prospect', 'companies', '--format', '=', 'j'], ['json']],
    [
      ['prospect', 'config', ''],
      ['set', 'get', 'unset', 'list', 'path', 'help'],
    ],
    [['prospect', 'config', 'set', ''], [...CONFIG_KEYS]],
    [
      ['prospect', 'config', 'unset', 'ma'],
      ['max-age', 'max-answer-size'],
    ],
    [
      ['prospect', 'state', ''],
      ['list', 'show', 'reset', 'help'],
    ],
    [
      ['prospect', 'state', 'reset', '--fo'],
      ['--forget-exports', '--format'],
    ],
    [
      ['prospect', 'completion', ''],
      ['bash', 'zsh', 'fish'],
    ],
    [['prospect', 'help', 'exit'], ['exit-codes']],
  ])('%j → %j', (words, expected) => {
    expect(bashComplete(words)).toEqual(expected);
  });

  it('completes a comma list one item at a time', () => {
    expect(bashComplete(['prospect', 'contacts', '--seniority', 'cxo,d'])).toEqual(['cxo,director']);
  });

  it('completes file names for -o and nothing for free text', () => {
    writeFileSync(join(dir, 'leads-2026.csv'), '');
    expect(bashComplete(['prospect', 'companies', '-o', 'leads-'])).toEqual(['leads-2026.csv']);
    expect(bashComplete(['prospect', 'companies', '--technology', ''])).toEqual([]);
  });

  it('does not take a flag value for a command', () => {
    // "config" here is the value of --country, so the command is still companies.
    expect(bashComplete(['prospect', 'companies', '--country', 'config', '--al'])).toEqual(['--allow-empty']);
  });
});

describe.each(['zsh', 'fish'] as const)('%s', (shell) => {
  it('names every command, the config keys and the fixed values', () => {
    const script = scripts[shell]!;
    for (const command of commands) expect(script).toMatch(new RegExp(`\\b${command}\\b`));
    for (const key of CONFIG_KEYS) expect(script).toContain(key);
    for (const [flag, values] of Object.entries(FIXED_VALUES)) {
      expect(script).toContain(shell === 'fish' ? `-l ${flag.slice(2)}` : flag);
      expect(script).toContain(shell === 'fish' && flag === '--seniority' ? values.join(',') : values.join(' '));
    }
  });

  describe.skipIf(SHELLS[shell].skip)(`in ${shell} itself`, () => {
    it("passes the shell's own syntax check", () => {
      const check = spawnSync(shell, ['-n', join(dir, `prospect.${shell}`)], { encoding: 'utf8' });
      expect(check.stderr).toBe('');
      expect(check.status).toBe(0);
    });
  });
});

describe.skipIf(SHELLS.zsh.skip)('zsh, loaded', () => {
  it('sourced after compinit, registers _prospect for prospect and defines the per-command functions', () => {
    const script = `autoload -U compinit && compinit -u -D; source ${JSON.stringify(join(dir, 'prospect.zsh'))}; print -r -- \${_comps[prospect]}; whence -w _prospect_companies _prospect_config`;
    const result = spawnSync('zsh', ['-f', '-c', script], { encoding: 'utf8', cwd: dir });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      '_prospect',
      '_prospect_companies: function',
      '_prospect_config: function',
      '',
    ]);
  });
});

/** What the fish completion offers for a command line (`complete -C`), without descriptions. */
function fishComplete(line: string): string[] {
  const script = `source ${JSON.stringify(join(dir, 'prospect.fish'))}; complete -C ${JSON.stringify(line)}`;
  const result = spawnSync('fish', ['--no-config', '-c', script], { encoding: 'utf8', cwd: dir });
  expect(result.stderr).toBe('');
  return result.stdout
    .split('\n')
    .filter((entry) => entry !== '')
    .map((entry) => entry.split('\t')[0]!);
}

describe.skipIf(SHELLS.fish.skip)('fish, completing', () => {
  it('every command, and those that start with what was typed', () => {
    expect(fishComplete('prospect ').sort()).toEqual([...commands].sort());
    expect(fishComplete('prospect co').sort()).toEqual(['companies', 'completion', 'config', 'contacts', 'count']);
  });

  it.each([
    ['prospect companies --format ', FIXED_VALUES['--format']],
    ['prospect contacts --seniority ', FIXED_VALUES['--seniority']],
    ['prospect pipeline --stale ', FIXED_VALUES['--stale']],
    ['prospect --sandbox-plan ', FIXED_VALUES['--sandbox-plan']],
    ['prospect config set ', [...CONFIG_KEYS]],
    ['prospect completion ', ['bash', 'zsh', 'fish']],
  ])('%j → the fixed values', (line, expected) => {
    expect(fishComplete(line).sort()).toEqual([...expected].sort());
  });

  it('the flags of a command', () => {
    const flags = fishComplete('prospect contacts --');
    expect(flags).toEqual(
      expect.arrayContaining(['--seniority', '--max-age', '--stale', '--format', '--output', '--domains-file']),
    );
    expect(flags).not.toContain('--technology');
  });
});

it('an unknown shell is a usage error (exit 2)', async () => {
  const result = await runCli(['completion', 'powershell']);
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toContain('Allowed choices are bash, zsh, fish.');
});

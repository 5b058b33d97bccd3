#!/usr/bin/env node
/**
 * Makes the PNG screenshots in docs/screenshots/ (and count-by-employee-range.svg, the chart `count -o` writes) from a real terminal: each command runs in a tmux
 * pane of a fixed size, `tmux capture-pane -e -p` takes the screen with its colours, and the text is
 * drawn as SVG (one monospace cell per character) and rasterised by rsvg-convert.
 *
 *   npm run build && node scripts/screenshots.mjs [NAME…]     (names: the SHOTS below; none: all)
 *
 * Needs tmux, rsvg-convert and ImageMagick (Debian: apt-get install tmux librsvg2-bin imagemagick) and the DejaVu Sans Mono
 * font. A developer runs it after a change to what the terminal shows; it is not part of npm test.
 * The data is the sandbox's (`prospect sandbox`, generated, nothing paid), with a little latency so
 * the progress bar can be caught mid-run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin', 'prospect.js');
const outDir = join(root, 'docs', 'screenshots');
const work = mkdtempSync(join(tmpdir(), 'prospect-shots-'));
const KEY = 'sandbox-growth';

const SIZE = { columns: 110, rows: 32 };
const CELL = { width: 8.4, height: 18, fontSize: 14 };
const PALETTE = ['#2e3436', '#cc0000', '#4e9a06', '#c4a000', '#3465a4', '#75507b', '#06989a', '#d3d7cf'];
const BRIGHT = ['#555753', '#ef2929', '#8ae234', '#fce94f', '#729fcf', '#ad7fa8', '#34e2e2', '#eeeeec'];
const COLORS = { background: '#1e1e1e', foreground: '#d4d4d4' };

/** The screenshots: a name, the command typed, and when the screen is worth taking. */
const SHOTS = [
  { name: 'help', command: 'prospect --help | head -40', until: 'finished' },
  { name: 'companies', command: 'prospect companies -t Shopify --country "united states" --max 12', until: 'finished' },
  {
    name: 'contacts',
    command: 'prospect contacts meadowfitness.com harborsupply.com arrowsports.com --seniority cxo,vp --per-company 4',
    until: 'finished',
  },
  {
    name: 'verify',
    command:
      'prospect verify --file people.csv --yes --columns full_name,title,business_email,verification,verified_at',
    until: 'finished',
  },
  {
    name: 'pipeline',
    command: 'prospect pipeline -t Shopify -T Klaviyo --country germany --seniority cxo --per-company 1',
    until: 'finished',
  },
  { name: 'count', command: 'prospect count -t Shopify --by employee_range', until: 'finished' },
  {
    name: 'progress',
    command: 'prospect companies -t WordPress --page-size 100 -o wordpress.csv',
    until: (screen) => Number(/ (\d+)% · .*ETA \d/.exec(screen)?.[1] ?? 0) >= 30,
  },
];

function tmux(...args) {
  return execFileSync('tmux', args, { encoding: 'utf8' });
}

async function startSandbox() {
  // The default dataset, named: counts depend only on the seed and the size (contacts' dates on the day).
  const child = spawn(
    process.execPath,
    [bin, 'sandbox', '--port', '0', '--seed', '1', '--companies', '50000', '--latency', '120'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const url = await new Promise((resolve, reject) => {
    child.stdout.once('data', (chunk) => resolve(String(chunk).trim().split('\n')[0]));
    child.once('exit', () => reject(new Error('the sandbox ended before it listened')));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

async function capture(shot, env) {
  const session = `prospect-shot-${shot.name}-${process.pid}`;
  const rc = join(work, 'bashrc');
  writeFileSync(
    rc,
    `PS1='\\[\\e[32m\\]$\\[\\e[0m\\] '\nprospect() { node ${JSON.stringify(bin)} "$@"; }\ncd ${JSON.stringify(work)}\n`,
  );
  const exports = Object.entries(env)
    .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
    .join(' ');
  tmux(
    'new-session',
    '-d',
    '-s',
    session,
    '-x',
    String(SIZE.columns),
    '-y',
    String(SIZE.rows),
    `env -u NO_COLOR ${exports} TERM=xterm-256color bash --noprofile --rcfile ${rc} -i`,
  );
  try {
    // `clear` wipes the typed line (and its wait-for); the command is shown as if typed at the prompt.
    const typed = `clear; printf '\\e[32m$\\e[0m %s\\n' ${shellQuote(shot.command)}; ${shot.command}; tmux wait-for -S ${session}-done`;
    tmux('send-keys', '-t', session, typed, 'Enter');
    if (shot.until === 'finished') tmux('wait-for', `${session}-done`);
    else {
      while (!shot.until(tmux('capture-pane', '-p', '-t', session)))
        await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return tmux('capture-pane', '-e', '-p', '-t', session);
  } finally {
    tmux('kill-session', '-t', session);
  }
}

function shellQuote(text) {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** ANSI text (SGR colours only, as capture-pane -e writes them) to an SVG of monospace cells. */
function toSvg(ansi) {
  const lines = ansi
    .replace(/\n+$/, '')
    .split('\n')
    .filter((line, index, all) => !(index === all.length - 1 && /^\s*(\x1b\[[0-9;]*m)*\s*$/.test(line)));
  const rows = lines.map(parseLine);
  const width = Math.ceil(SIZE.columns * CELL.width + 24);
  const height = Math.ceil(rows.length * CELL.height + 24);
  const texts = rows.map((spans, row) => {
    const y = 12 + (row + 1) * CELL.height - 5;
    return spans
      .filter((span) => span.text.trim().length > 0)
      .map(
        (span) =>
          `<text x="${(12 + span.column * CELL.width).toFixed(1)}" y="${y}" fill="${span.color}"${span.bold ? ' font-weight="bold"' : ''} textLength="${(span.text.length * CELL.width).toFixed(1)}" lengthAdjust="spacingAndGlyphs">${escapeXml(span.text)}</text>`,
      )
      .join('');
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="DejaVu Sans Mono" font-size="${CELL.fontSize}" xml:space="preserve"><rect width="100%" height="100%" rx="6" fill="${COLORS.background}"/>${texts.join('\n')}</svg>\n`;
}

function parseLine(line) {
  const spans = [];
  let state = { color: COLORS.foreground, bold: false };
  let column = 0;
  for (const [token, codes] of line.matchAll(/\x1b\[([0-9;]*)m|[^\x1b]/gu)) {
    if (codes !== undefined || token.startsWith('\x1b')) {
      state = applySgr(state, (codes || '0').split(';').map(Number));
      continue;
    }
    const last = spans.at(-1);
    if (
      last &&
      last.color === state.color &&
      last.bold === state.bold &&
      last.column + [...last.text].length === column
    )
      last.text += token;
    else spans.push({ ...state, column, text: token });
    column += 1;
  }
  return spans;
}

function applySgr(state, codes) {
  let next = { ...state };
  for (let index = 0; index < codes.length; index++) {
    const code = codes[index];
    if (code === 0) next = { color: COLORS.foreground, bold: false };
    else if (code === 1) next.bold = true;
    else if (code === 22) next.bold = false;
    else if (code >= 30 && code <= 37) next.color = PALETTE[code - 30];
    else if (code >= 90 && code <= 97) next.color = BRIGHT[code - 90];
    else if (code === 39) next.color = COLORS.foreground;
    else if (code === 38 && codes[index + 1] === 5) {
      const n = codes[index + 2];
      next.color = n < 8 ? PALETTE[n] : n < 16 ? BRIGHT[n - 8] : COLORS.foreground;
      index += 2;
    }
  }
  return next;
}

function escapeXml(text) {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

const sandbox = await startSandbox();
try {
  mkdirSync(outDir, { recursive: true });
  const env = {
    PROSPECT_BASE_URL: sandbox.url,
    PROSPECT_API_KEY: KEY,
    PROSPECT_CACHE_DIR: join(work, 'cache'),
    PROSPECT_CONFIG_DIR: join(work, 'config'),
  };
  const people = execFileSync(
    process.execPath,
    [
      bin,
      'contacts',
      '--seniority',
      'cxo,vp',
      '--per-company',
      '3',
      '--format',
      'csv',
      'meadowfitness.com',
      'harborsupply.com',
      'arrowsports.com',
    ],
    { env: { ...process.env, ...env }, encoding: 'utf8' },
  );
  writeFileSync(join(work, 'people.csv'), people);
  const only = process.argv.slice(2);
  for (const shot of SHOTS.filter((candidate) => only.length === 0 || only.includes(candidate.name))) {
    const svg = toSvg(await capture(shot, env));
    const svgPath = join(work, `${shot.name}.svg`);
    writeFileSync(svgPath, svg);
    const pngPath = join(outDir, `${shot.name}.png`);
    execFileSync('rsvg-convert', ['--format', 'png', '--output', pngPath, svgPath]);
    // A terminal has few colours: a 32-colour palette keeps the file a fifth of the size, and looks the same.
    execFileSync('convert', [pngPath, '-colors', '32', `PNG8:${pngPath}`]);
    console.log(`docs/screenshots/${shot.name}.png`);
  }
  // The same chart as the count shot, as the SVG that `-o chart.svg` writes (README "Size it first").
  if (only.length === 0 || only.includes('count')) {
    execFileSync(
      process.execPath,
      [bin, 'count', '-t', 'Shopify', '--by', 'employee_range', '-o', join(outDir, 'count-by-employee-range.svg')],
      { env: { ...process.env, ...env } },
    );
    console.log('docs/screenshots/count-by-employee-range.svg');
  }
} finally {
  sandbox.stop();
  rmSync(work, { recursive: true, force: true });
}

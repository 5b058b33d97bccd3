/**
 * `count --by … -o chart.svg`: the file is XML to an independent parser (python3's xml.etree), and
 * headless Chromium draws its bars: the pixel at each bar's centre, read back with pngjs, has
 * the bar's colour, and the one just right of the bar's end does not.
 */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeXml } from '../../src/io/svg-chart.js';
import { runCli, scratchDir } from '../helpers/cli.js';
import { findProgram } from '../helpers/programs.js';
import { SANDBOX_KEYS, startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

const PYTHON = findProgram('python3');
const CHROMIUM = findProgram('chromium');

/** The chart's bars as python3's XML parser reads them: [x, y, width, height, fill]. */
const READ_BARS = `
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = '{http://www.w3.org/2000/svg}'
bars = [[float(r.get(k)) for k in ('x', 'y', 'width', 'height')] + [r.get('fill')] for r in root.iter(ns + 'rect') if r.get('x') is not None]
texts = [''.join(t.itertext()) for t in root.iter(ns + 'text')]
print(json.dumps({'width': root.get('width'), 'height': root.get('height'), 'bars': bars, 'texts': texts}))
`;

/** The colour of a pixel of a PNG as RRGGBB, read by pngjs. */
function readPng(bytes: Buffer): { hexAt(x: number, y: number): string } {
  const image = PNG.sync.read(bytes);
  return {
    hexAt(x, y) {
      const at = (y * image.width + x) * 4;
      return [...image.data.subarray(at, at + 3)]
        .map((byte) => byte.toString(16).padStart(2, '0'))
        .join('')
        .toUpperCase();
    },
  };
}

describe('escapeXml', () => {
  it('escapes markup and drops characters XML cannot hold', () => {
    expect(escapeXml(`<b a="1">Tom & Jerry's</b>\u0001`)).toBe(
      '&#60;b a=&#34;1&#34;&#62;Tom &#38; Jerry&#39;s&#60;/b&#62;',
    );
  });
});

describe.skipIf(PYTHON.skip || CHROMIUM.skip)('count --by … -o chart.svg', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ companies: 2_000 });
  });
  afterAll(async () => sandbox?.close());

  it('writes an SVG that parses as XML and renders with its bars visible', async () => {
    const dir = await scratchDir();
    const svg = join(dir, 'chart.svg');
    const run = await runCli(['count', '-t', 'Shopify', '--by', 'employee_range', '--top', '4', '-o', svg], {
      url: sandbox.url,
      apiKey: SANDBOX_KEYS.growth,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('');

    const parsed = spawnSync(PYTHON.command, ['-c', READ_BARS, svg], { encoding: 'utf8' });
    expect(parsed.status, parsed.stderr).toBe(0);
    const chart = JSON.parse(parsed.stdout) as {
      width: string;
      height: string;
      bars: Array<[number, number, number, number, string]>;
      texts: string[];
    };
    // Four segments and the "other" row, each a bar.
    expect(chart.bars).toHaveLength(5);
    expect(chart.texts).toContain('other');

    const png = join(dir, 'chart.png');
    const shot = spawnSync(
      CHROMIUM.command,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--hide-scrollbars',
        '--force-device-scale-factor=1',
        `--window-size=${chart.width},${chart.height}`,
        `--screenshot=${png}`,
        `file://${svg}`,
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(shot.status, shot.stderr).toBe(0);
    const image = readPng(await readFile(png));
    const colourAt = (x: number, y: number) => image.hexAt(Math.round(x), Math.round(y));
    for (const [x, y, width, height, fill] of chart.bars) {
      expect(colourAt(x + width / 2, y + height / 2)).toBe(fill.slice(1).toUpperCase());
      expect(colourAt(x + width + 3, y + height / 2)).not.toBe(fill.slice(1).toUpperCase());
    }
  });
});

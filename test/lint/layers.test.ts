/**
 * The layer rules of .dependency-cruiser.cjs (what `npm run lint` enforces on src/) bite: each case is a
 * small tree in a scratch directory laid out like src/, cruised with the project's own rules.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cruise, type IForbiddenRuleType } from 'dependency-cruiser';

const require = createRequire(import.meta.url);
const { forbidden } = require('../../.dependency-cruiser.cjs') as { forbidden: IForbiddenRuleType[] };

const scratch = mkdtempSync(join(tmpdir(), 'prospect-layers-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let trees = 0;
/** The rules broken by a tree of files (path under the tree → its imports), as "rule: from → to". */
async function violations(files: Record<string, string[]>): Promise<string[]> {
  const root = join(scratch, String(trees++));
  for (const [path, imports] of Object.entries(files)) {
    mkdirSync(join(root, dirname(path)), { recursive: true });
    writeFileSync(
      join(root, path),
      imports.map((target) => `import '${target}';\n`).join('') + 'export const here = 1;\n',
    );
  }
  const result = await cruise(['src'], {
    baseDir: root,
    validate: true,
    ruleSet: { forbidden },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  });
  if (typeof result.output === 'string') throw new Error('expected a cruise result, got text');
  return result.output.summary.violations
    .map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`)
    .sort();
}

describe('the layer rules (.dependency-cruiser.cjs)', () => {
  it('let core import the api below it', async () => {
    expect(
      await violations({ 'src/core/shared/caveats.ts': ['../../api/limits.js'], 'src/api/limits.ts': [] }),
    ).toEqual([]);
  });

  it('refuse an import from src/api up into src/core', async () => {
    expect(
      await violations({ 'src/api/client.ts': ['../core/shared/caveats.js'], 'src/core/shared/caveats.ts': [] }),
    ).toEqual(['layer-api: src/api/client.ts → src/core/shared/caveats.ts']);
  });

  it('refuse core/shared reaching up into a job, and a job reaching into the job beside it', async () => {
    expect(
      await violations({
        'src/core/shared/keep-empty.ts': ['../contacts/rows.js'],
        'src/core/contacts/rows.ts': ['../companies/set-count.js'],
        'src/core/companies/set-count.ts': [],
      }),
    ).toEqual([
      'layer-core/shared: src/core/shared/keep-empty.ts → src/core/contacts/rows.ts',
      'peers-core/contacts: src/core/contacts/rows.ts → src/core/companies/set-count.ts',
    ]);
  });

  it('refuse ui importing io (io may use ui, not the other way round)', async () => {
    expect(await violations({ 'src/ui/reporter.ts': ['../io/sink.js'], 'src/io/sink.ts': [] })).toEqual([
      'layer-ui: src/ui/reporter.ts → src/io/sink.ts',
    ]);
  });

  it('refuse a circle inside one layer, and a file in no layer', async () => {
    const found = await violations({
      'src/io/a.ts': ['./b.js'],
      'src/io/b.ts': ['./a.js'],
      'src/stray/x.ts': ['../util/text.js'],
      'src/util/text.ts': [],
    });
    expect(found).toContain('no-circular: src/io/a.ts → src/io/b.ts');
    expect(found).toContain('in-a-layer: src/stray/x.ts → src/util/text.ts');
  });

  it('keep the sandbox apart: core does not reach it, and it uses only util', async () => {
    expect(
      await violations({
        'src/core/count/job.ts': ['../../sandbox/index.js'],
        'src/sandbox/index.ts': ['../api/limits.js', '../package.js'],
        'src/api/limits.ts': [],
        'src/package.ts': [],
      }),
    ).toEqual([
      'sandbox-self-contained: src/sandbox/index.ts → src/api/limits.ts',
      'sandbox-separate: src/core/count/job.ts → src/sandbox/index.ts',
    ]);
  });

  it('only the sandbox command and the --sandbox launcher reach the sandbox: no other command, not the entry', async () => {
    expect(
      await violations({
        'src/cli.ts': ['./sandbox/auth.js'],
        'src/commands/completion.ts': ['../sandbox/auth.js'],
        'src/commands/sandbox.ts': ['../sandbox/auth.js'],
        'src/commands/sandbox-command.ts': ['../sandbox/auth.js'],
        'src/commands/sandbox-flags.ts': ['../sandbox/auth.js'],
        'src/runtime/connection.ts': ['../sandbox/auth.js'],
        'src/sandbox/auth.ts': [],
      }),
    ).toEqual([
      'sandbox-separate: src/cli.ts → src/sandbox/auth.ts',
      'sandbox-separate: src/commands/completion.ts → src/sandbox/auth.ts',
      'sandbox-separate: src/commands/sandbox.ts → src/sandbox/auth.ts',
    ]);
  });
});

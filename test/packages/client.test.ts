/**
 * packages/client (issue 44): the library as a package of its own. It is packed with `npm pack` and
 * installed into an empty project offline, with an empty npm cache and its two dependencies packed
 * from this checkout's node_modules (by tar, see tarballOf), so nothing can come from a registry. The install holds exactly
 * the client, undici and zod (none of commander, ora, exceljs, better-sqlite3, pg, conf), and the
 * installed package, imported by its path in that project, pages companies from an in-process sandbox.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scratchDir } from '../helpers/scratch.js';
import { SANDBOX_KEYS, startTestSandbox, type RunningSandbox } from '../helpers/sandbox.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CLIENT = join(ROOT, 'packages/client');
const CLI_DEPENDENCIES = ['commander', 'ora', 'exceljs', 'better-sqlite3', 'pg', 'conf', 'cli-table3', 'p-limit'];

type Manifest = { name: string; version: string; dependencies?: Record<string, string> };
const manifestOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
const run = promisify(execFile);

/** `npm pack` of a directory into `into`; the tarball's path. Scripts are not run: dist/ is built already. */
async function pack(dir: string, into: string): Promise<string> {
  const { stdout } = await run('npm', ['pack', dir, '--pack-destination', into, '--ignore-scripts', '--json'], {
    cwd: into,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string }>;
  return join(into, packed!.filename);
}

/**
 * An installed dependency as the tarball it came in: its directory under `package/`, as `npm pack`
 * lays it out. What npm installed is already the published file list, so tar gives what `npm pack`
 * would (which costs a second or more of CPU for zod's 840 files).
 */
async function tarballOf(name: string, into: string): Promise<string> {
  const tarball = join(into, `${name}.tgz`);
  await run('tar', ['-czf', tarball, '-C', join(ROOT, 'node_modules'), `--transform=s,^${name},package,`, name]);
  return tarball;
}

let sandbox: RunningSandbox;
let project: string;

beforeAll(async () => {
  // A small dataset of the test seed: the test pages 20 Shopify companies.
  sandbox = await startTestSandbox({ companies: 2000 });
  const scratch = await scratchDir('prospect-client-pack-');
  project = join(scratch, 'app');
  const dependencies = Object.keys(manifestOf(CLIENT).dependencies ?? {});
  const tarballs = [
    await pack(CLIENT, scratch),
    ...(await Promise.all(dependencies.map((name) => tarballOf(name, scratch)))),
  ];
  await run('mkdir', [project]);
  writeFileSync(join(project, 'package.json'), '{"name":"app","version":"1.0.0","private":true,"type":"module"}\n');
  const offline = ['--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--cache', join(scratch, 'cache')];
  await run('npm', ['install', ...offline, ...tarballs], { cwd: project });
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
});

describe('packages/client, packed and installed into an empty project offline', () => {
  it('has the version and the dependency ranges of the root package, and only undici and zod', () => {
    const client = manifestOf(CLIENT);
    const root = manifestOf(ROOT);
    expect(client.version).toBe(root.version);
    expect(Object.keys(client.dependencies ?? {}).sort()).toEqual(['undici', 'zod']);
    for (const [name, range] of Object.entries(client.dependencies ?? {}))
      expect(range, name).toBe(root.dependencies?.[name]);
  });

  it('installs the client, undici and zod, and none of the CLI dependencies', () => {
    const installed = readdirSync(join(project, 'node_modules')).filter((name) => !name.startsWith('.'));
    expect(installed.sort()).toEqual(['prospect-client', 'undici', 'zod']);
    for (const name of CLI_DEPENDENCIES) expect(installed).not.toContain(name);
  });

  it("import { createClient } from 'prospect-client' pages companies from the sandbox", async () => {
    const entry = join(project, 'node_modules/prospect-client/dist/index.js');
    const library = (await import(pathToFileURL(entry).href)) as typeof import('../../src/index.js');
    expect(library).not.toHaveProperty('ExitCode');
    const client = library.createClient({ baseUrl: sandbox.url, apiKey: SANDBOX_KEYS.growth, pageSize: 10 });
    try {
      const domains: string[] = [];
      for await (const page of client.companies({ technology: 'Shopify' })) {
        domains.push(...page.data.map((row) => row.domain));
        if (domains.length >= 20) break;
      }
      expect(new Set(domains).size).toBe(20);
      // Errors are the package's own classes, carrying the facts: a plan without contacts is a 403.
      const free = library.createClient({ baseUrl: sandbox.url, apiKey: SANDBOX_KEYS.free });
      const refused = await free
        .contacts({ domains: [domains[0]!] })
        .finally(() => free.close())
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(library.AuthError);
      expect(refused).toMatchObject({ status: 403, code: 'plan_required', host: new URL(sandbox.url).host });
    } finally {
      await client.close();
    }
    // The package's declarations are there for a TypeScript user.
    expect(readFileSync(join(project, 'node_modules/prospect-client/dist/index.d.ts'), 'utf8')).toContain(
      'createClient',
    );
  });
});

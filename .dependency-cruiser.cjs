/**
 * The layers of src/ (README "Architecture"), enforced by `npm run lint`: a module imports only from
 * its own layer's folder or from the layers after it in LAYERS. Type-only imports count too, and so
 * do dynamic imports. test/architecture.test.ts proves the rules bite and that every source file is
 * in a layer.
 */

/** Top to bottom. Each entry is one layer; several paths in an entry are one layer's folders. */
const LAYERS = [
  { name: 'entry', paths: ['^src/cli\\.ts$', '^src/index\\.ts$'] },
  { name: 'commands', paths: ['^src/commands/', '^src/completion/'] },
  // The jobs, each one concept; the ones that combine others sit above them.
  // `prospect provenance`: what the exports ledgers (a --state directory's, the team's) say of a person.
  { name: 'core/provenance', paths: ['^src/core/provenance/'] },
  { name: 'core/pipeline', paths: ['^src/core/pipeline/'] },
  { name: 'core/count', paths: ['^src/core/count/'] },
  { name: 'core/companies', paths: ['^src/core/companies/'], peers: 'core-jobs' },
  { name: 'core/contacts', paths: ['^src/core/contacts/'], peers: 'core-jobs' },
  { name: 'core/doctor', paths: ['^src/core/doctor/'], peers: 'core-jobs' },
  { name: 'core/verification', paths: ['^src/core/verification/'] },
  // The snapshots of listings and their diff (what changed since the last complete listing).
  { name: 'core/changes', paths: ['^src/core/changes/'] },
  // `prospect forget`: the standing suppressions every job with addresses honours.
  { name: 'core/suppression', paths: ['^src/core/suppression/'] },
  // Where a run's state lives (local files and SQLite, or the team's PostgreSQL): the ledger, lock and runs.
  { name: 'core/state-store', paths: ['^src/core/state-store/'] },
  { name: 'core/shared', paths: ['^src/core/shared/'] },
  // What a run is given: its context and connection, the config file, the flag table.
  { name: 'runtime', paths: ['^src/runtime/', '^src/config/', '^src/options/'] },
  { name: 'io', paths: ['^src/io/'] },
  { name: 'ui', paths: ['^src/ui/'] },
  { name: 'errors', paths: ['^src/exit-codes\\.ts$', '^src/exit-code-table\\.ts$', '^src/errors\\.ts$'] },
  { name: 'api', paths: ['^src/api/'] },
  { name: 'util', paths: ['^src/util/', '^src/package\\.ts$'] },
];

/**
 * The sandbox is a separate program (the service itself): only the `sandbox` command (its definition and
 * its flags, loaded lazily by src/commands/sandbox.ts) and the --sandbox launcher reach it.
 */
const SANDBOX = '^src/sandbox/';
const SANDBOX_STARTERS = ['^src/commands/sandbox-(command|flags)\\.ts$', '^src/runtime/connection\\.ts$'];

const below = (index) => LAYERS.slice(index + 1).flatMap((layer) => layer.paths);
const above = (index) =>
  LAYERS.slice(0, index)
    .filter((layer) => layer.peers === undefined || layer.peers !== LAYERS[index].peers)
    .flatMap((layer) => layer.paths);

const layerRules = LAYERS.flatMap((layer, index) => {
  const rules = [];
  if (index > 0)
    rules.push({
      name: `layer-${layer.name}`,
      comment: `${layer.name} imports only from the layers below it (${below(index).join(' ') || 'none'})`,
      severity: 'error',
      from: { path: layer.paths },
      to: { path: above(index) },
    });
  if (layer.peers !== undefined) {
    const peers = LAYERS.filter((other) => other.peers === layer.peers && other !== layer).flatMap((o) => o.paths);
    rules.push({
      name: `peers-${layer.name}`,
      comment: `${layer.name} does not import a job beside it; what two jobs share goes down to core/shared`,
      severity: 'error',
      from: { path: layer.paths },
      to: { path: peers },
    });
  }
  return rules;
});

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-circular',
      comment: 'no import circles, type-only ones included',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'sandbox-separate',
      comment: 'only the `sandbox` command (sandbox-command.ts, sandbox-flags.ts) and --sandbox reach the sandbox',
      severity: 'error',
      from: { path: '^src/', pathNot: [SANDBOX, ...SANDBOX_STARTERS] },
      to: { path: SANDBOX },
    },
    {
      name: 'sandbox-self-contained',
      comment: 'the sandbox is the service: it uses none of the client, only util',
      severity: 'error',
      from: { path: SANDBOX },
      to: { path: '^src/', pathNot: [SANDBOX, ...LAYERS.at(-1).paths] },
    },
    {
      name: 'in-a-layer',
      comment: 'every source file is in a layer (add a new folder to LAYERS in .dependency-cruiser.cjs)',
      severity: 'error',
      from: { path: '^src/', pathNot: [SANDBOX, ...LAYERS.flatMap((layer) => layer.paths)] },
      to: {},
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};

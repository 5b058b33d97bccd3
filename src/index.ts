/** The library API: the same typed client the CLI is built on. */
export * from './api/index.js';
export { ExitCode, CliError, UsageError, EXIT_CODE_DOCS, exitCodeOf } from './exit-codes.js';

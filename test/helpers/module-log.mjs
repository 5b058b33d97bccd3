// `node --import` this file to append the URL of every module the process loads to the file
// PROSPECT_TEST_MODULE_LOG names (test/cli.startup.cli.test.ts). The hooks run in their own thread.
import { register } from 'node:module';

register('./module-log-hooks.mjs', import.meta.url);

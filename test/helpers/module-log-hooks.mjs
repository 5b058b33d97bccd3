// Module hooks for module-log.mjs: each loaded URL, one a line, before it is loaded.
import { appendFileSync } from 'node:fs';

export async function load(url, context, nextLoad) {
  if (process.env.PROSPECT_TEST_MODULE_LOG) appendFileSync(process.env.PROSPECT_TEST_MODULE_LOG, `${url}\n`);
  return nextLoad(url, context);
}

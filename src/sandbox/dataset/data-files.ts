/** Reads the data the generator is built from: fixtures/ of the installed package (data only). */
import { readFileSync } from 'node:fs';
import { packageFile } from '../../package.js';

export function readDataText(...segments: string[]): string {
  return readFileSync(packageFile('fixtures', ...segments), 'utf8');
}

export function readDataJson<T>(...segments: string[]): T {
  return JSON.parse(readDataText(...segments)) as T;
}

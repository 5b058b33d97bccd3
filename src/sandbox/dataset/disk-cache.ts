/**
 * The generated columns of a dataset kept on disk, so that `--sandbox` (a sandbox started inside every
 * command) reads them in milliseconds instead of drawing 50,000 companies again (BENCHMARKS.md). A
 * file is named by size and seed and carries a fingerprint of the code and data that drew it: the
 * modules beside this one (the bundle's chunks, whose names and bytes change with the code) and
 * fixtures/. Any mismatch, damage or failure to read or write means a fresh build; the cache only
 * ever costs a build, never a wrong dataset.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageFile } from '../../package.js';

export interface CompanyColumns {
  domains: string[];
  companyNames: string[];
  rankBucket: Uint8Array;
  employee: Uint8Array;
  country: Uint8Array;
  industry: Uint8Array;
}

export interface DatasetColumns extends CompanyColumns {
  flags: Uint8Array;
  contactCounts: Uint16Array;
  techOffsets: Uint32Array;
  techs: Uint16Array;
  postingOffsets: Uint32Array;
  postings: Uint32Array;
}

const MAGIC = 'prospect-sandbox-dataset-1';
const NUMBER_COLUMNS = {
  rankBucket: Uint8Array,
  employee: Uint8Array,
  country: Uint8Array,
  industry: Uint8Array,
  flags: Uint8Array,
  contactCounts: Uint16Array,
  techOffsets: Uint32Array,
  techs: Uint16Array,
  postingOffsets: Uint32Array,
  postings: Uint32Array,
} as const;
type NumberColumn = keyof typeof NUMBER_COLUMNS;
const STRING_COLUMNS = ['domains', 'companyNames'] as const;

interface Header {
  magic: string;
  fingerprint: string;
  companies: number;
  seed: number;
  /** Byte length of each part, in the order of STRING_COLUMNS then NUMBER_COLUMNS. */
  lengths: number[];
}

/** The columns of (companies, seed) from `dir`, or `build()` written there for the next run. */
export function cachedColumns(
  dir: string,
  key: { companies: number; seed: number },
  build: () => DatasetColumns,
): DatasetColumns {
  const fingerprint = codeFingerprint();
  const file = join(dir, `dataset-${key.companies}-${key.seed}-${fingerprint.slice(0, 16)}.bin`);
  const read = readColumns(file, { ...key, fingerprint });
  if (read) return read;
  const columns = build();
  writeColumns(dir, file, encode(columns, { magic: MAGIC, fingerprint, ...key, lengths: [] }));
  return columns;
}

let fingerprintOfProcess: string | undefined;

/** A hash of every module beside this one and of the generator's data files. */
function codeFingerprint(): string {
  if (fingerprintOfProcess) return fingerprintOfProcess;
  const hash = createHash('sha256').update(`${MAGIC}\n${endianness()}\n`);
  const hashFiles = (directory: string, keep: (name: string) => boolean) => {
    for (const name of readdirSync(directory).filter(keep).sort()) {
      hash.update(`${name}\n`).update(readFileSync(join(directory, name)));
    }
  };
  hashFiles(dirname(fileURLToPath(import.meta.url)), (name) => /\.[cm]?[jt]s$/.test(name));
  hashFiles(packageFile('fixtures'), (name) => name.endsWith('.csv'));
  hashFiles(packageFile('fixtures', 'data'), (name) => name.endsWith('.json'));
  fingerprintOfProcess = hash.digest('hex');
  return fingerprintOfProcess;
}

function encode(columns: DatasetColumns, header: Header): Buffer[] {
  const parts: Buffer[] = [
    ...STRING_COLUMNS.map((name) => Buffer.from(columns[name].join('\n'), 'utf8')),
    ...(Object.keys(NUMBER_COLUMNS) as NumberColumn[]).map((name) => {
      const array = columns[name];
      return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
    }),
  ];
  const head = Buffer.from(`${JSON.stringify({ ...header, lengths: parts.map((part) => part.length) })}\n`);
  return [head, ...parts];
}

function readColumns(file: string, expected: Omit<Header, 'magic' | 'lengths'>): DatasetColumns | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  const newline = bytes.indexOf(0x0a);
  const header = parseHeader(bytes.subarray(0, Math.max(0, newline)));
  if (!header || header.fingerprint !== expected.fingerprint) return undefined;
  if (header.companies !== expected.companies || header.seed !== expected.seed) return undefined;
  const names = [...STRING_COLUMNS, ...(Object.keys(NUMBER_COLUMNS) as NumberColumn[])];
  if (header.lengths.length !== names.length) return undefined;
  let offset = newline + 1;
  if (offset + header.lengths.reduce((sum, length) => sum + length, 0) !== bytes.length) return undefined;
  const columns: Record<string, unknown> = {};
  names.forEach((name, i) => {
    const part = bytes.subarray(offset, offset + (header.lengths[i] as number));
    offset += part.length;
    columns[name] = name in NUMBER_COLUMNS ? numbers(NUMBER_COLUMNS[name as NumberColumn], part) : lines(part);
  });
  const read = columns as unknown as DatasetColumns;
  return read.domains.length === expected.companies && read.companyNames.length === expected.companies
    ? read
    : undefined;
}

function parseHeader(text: Buffer): Header | undefined {
  try {
    const header = JSON.parse(text.toString('utf8')) as Partial<Header>;
    const valid =
      header.magic === MAGIC && Array.isArray(header.lengths) && header.lengths.every((n) => Number.isSafeInteger(n));
    return valid ? (header as Header) : undefined;
  } catch {
    return undefined;
  }
}

/** A copy into a fresh typed array: the file's bytes need not be aligned for its element size. */
function numbers(
  Type: Uint8ArrayConstructor | Uint16ArrayConstructor | Uint32ArrayConstructor,
  part: Buffer,
): Uint8Array | Uint16Array | Uint32Array {
  const array = new Type(Math.floor(part.length / Type.BYTES_PER_ELEMENT));
  new Uint8Array(array.buffer).set(part.subarray(0, array.byteLength));
  return array;
}

function lines(part: Buffer): string[] {
  return part.length === 0 ? [''] : part.toString('utf8').split('\n');
}

/** Written beside its final name and renamed in, so a reader sees a whole file or none; older builds' files go. */
function writeColumns(dir: string, file: string, parts: Buffer[]): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(temporary, Buffer.concat(parts), { flag: 'wx', mode: 0o600 });
    renameSync(temporary, file);
    const stem = file.slice(dir.length + 1).replace(/-[0-9a-f]{16}\.bin$/, '-');
    for (const name of readdirSync(dir)) {
      if (name.startsWith(stem) && name.endsWith('.bin') && join(dir, name) !== file) rmSync(join(dir, name));
    }
  } catch {
    // A cache that cannot be written costs the next run a build, nothing else.
    try {
      rmSync(temporary, { force: true });
    } catch {
      /* the directory itself is not there to clean */
    }
  }
}

/**
 * An .xlsx checked before exceljs inflates it: exceljs holds every part of a workbook in memory, so a
 * 1 MB zip that unzips to 1 GiB would cost gigabytes. The zip's directory is read with yauzl, then each
 * part is unzipped to nowhere, so a part larger than its directory says is caught too (yauzl's check).
 */
import { formatCount } from '../../ui/format-count.js';
import { inputTooLarge, limitsOf, type InputLimits } from './limits.js';
import type { Entry, ZipFile } from 'yauzl';

/** Parts smaller than this are never refused for their ratio: an empty sheet zips 100:1 and more. */
const RATIO_FLOOR_BYTES = 1024 * 1024;

const HINT = 'Is it the right file? Save the sheet as "CSV UTF-8", which prospect reads as a stream.';

/** Resolves when the workbook at `path` unzips within the limits; a UsageError (exit 2) when not. */
export async function checkWorkbookSize(path: string, origin: string, given?: Partial<InputLimits>): Promise<void> {
  const limits = limitsOf(given);
  const { default: yauzl } = await import('yauzl');
  const zip = await yauzl.openPromise(path, { lazyEntries: true, autoClose: false });
  try {
    const entries = await entriesOf(zip);
    checkDeclared(entries, origin, limits);
    for (const entry of entries) await unzipToNowhere(zip, entry);
  } finally {
    zip.close();
  }
}

function checkDeclared(entries: readonly Entry[], origin: string, limits: InputLimits): void {
  let total = 0;
  for (const entry of entries) {
    total += entry.uncompressedSize;
    if (total > limits.workbookBytes) {
      throw inputTooLarge(
        origin,
        'as an Excel workbook',
        `it unzips to more than ${bytes(limits.workbookBytes)}`,
        HINT,
      );
    }
    const ratio = entry.uncompressedSize / Math.max(entry.compressedSize, 1);
    if (entry.uncompressedSize > RATIO_FLOOR_BYTES && ratio > limits.workbookRatio) {
      const times = formatCount(limits.workbookRatio);
      const what = `one part unzips to ${bytes(entry.uncompressedSize)}, more than ${times} times its zipped size`;
      throw inputTooLarge(origin, 'as an Excel workbook', what, HINT);
    }
  }
}

function entriesOf(zip: ZipFile): Promise<Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: Entry[] = [];
    zip.on('entry', (entry: Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.once('end', () => resolve(entries));
    zip.once('error', reject);
    zip.readEntry();
  });
}

/** Unzips one part and drops the bytes: yauzl fails the stream as soon as it passes its declared size. */
async function unzipToNowhere(zip: ZipFile, entry: Entry): Promise<void> {
  if (entry.fileName.endsWith('/')) return;
  const stream = await zip.openReadStreamPromise(entry);
  for await (const chunk of stream) void chunk;
}

function bytes(count: number): string {
  return `${formatCount(count)} bytes`;
}

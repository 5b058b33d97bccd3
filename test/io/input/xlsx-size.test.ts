/**
 * An .xlsx is checked before exceljs inflates it (src/io/input/xlsx-size.ts): a zip bomb is exit 2,
 * naming the file and the limit. The bombs are built by python3's zipfile (an independent writer) and
 * are a few hundred KB on disk; the sizes in a zip's headers are patched to lie with struct.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import ExcelJS from 'exceljs';
import { ExitCode } from '../../../src/exit-codes.js';
import { workbookAsCsv } from '../../../src/io/input/xlsx.js';
import { scratchDirSync } from '../../helpers/scratch.js';

const dir = scratchDirSync('prospect-xlsx-');

/** A zip of `xl/sharedStrings.xml` holding `mib` MiB of one letter; `lie` patches its declared size. */
function bomb(name: string, mib: number, lie?: number): string {
  const path = join(dir, name);
  const script = `
import struct, sys, zipfile
path, mib, lie = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with zipfile.ZipFile(path, 'w', zipfile.ZIP_DEFLATED, compresslevel=9) as z:
    z.writestr('[Content_Types].xml', '<Types/>')
    z.writestr('xl/sharedStrings.xml', b'<sst><si><t>' + b'a' * (mib << 20) + b'</t></si></sst>')
if lie:
    # The part's size in its local header (offset 22) and in the central directory (offset 24).
    data, name = bytearray(open(path, 'rb').read()), b'xl/sharedStrings.xml'
    local = data.find(name) - 30
    central = data.find(name, local + 31) - 46
    assert data[local:local + 4] == b'PK\\x03\\x04' and data[central:central + 4] == b'PK\\x01\\x02'
    struct.pack_into('<I', data, local + 22, int(lie))
    struct.pack_into('<I', data, central + 24, int(lie))
    open(path, 'wb').write(data)
`;
  execFileSync('python3', ['-c', script, path, String(mib), lie === undefined ? '' : String(lie)]);
  return path;
}

async function read(path: string, limits?: { workbookBytes?: number; workbookRatio?: number }): Promise<string> {
  let text = '';
  for await (const chunk of workbookAsCsv(path, 'accounts.xlsx', limits)) text += chunk;
  return text;
}

async function refusal(promise: Promise<unknown>): Promise<{ message: string; exitCode: number }> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error, 'the workbook was read without a refusal').toBeInstanceOf(Error);
  return error as { message: string; exitCode: number };
}

describe('an xlsx bomb is refused before exceljs reads it', () => {
  it('a part that unzips 1000 times its size (8 MiB of one letter) is exit 2 naming the file and the ratio', async () => {
    const error = await refusal(read(bomb('ratio.xlsx', 8)));
    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.message).toMatch(
      /^accounts\.xlsx as an Excel workbook: one part unzips to 8,388,\d{3} bytes, more than 1,000 times its zipped size, more than prospect reads; nothing more was read\.$/,
    );
  });

  it('parts that unzip past the total limit are exit 2 naming the limit', async () => {
    const error = await refusal(read(bomb('total.xlsx', 3), { workbookBytes: 2 * 1024 * 1024, workbookRatio: 1e9 }));
    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.message).toBe(
      'accounts.xlsx as an Excel workbook: it unzips to more than 2,097,152 bytes, more than prospect reads; nothing more was read.',
    );
  });

  it('a part that says it is 1,000 bytes and unzips to 8 MiB is exit 2 once it passes 1,000 bytes', async () => {
    const error = await refusal(read(bomb('liar.xlsx', 8, 1000)));
    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.message).toMatch(/^cannot read accounts\.xlsx as an Excel workbook: too many bytes in the stream/);
  });
});

it('a normal workbook still reads, its first sheet as CSV', async () => {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('Accounts');
  sheet.addRow(['name', 'domain']);
  sheet.addRow(['Acme', 'acme.com']);
  const path = join(dir, 'normal.xlsx');
  await workbook.xlsx.writeFile(path);
  expect(await read(path)).toBe('name,domain\nAcme,acme.com\n');
});

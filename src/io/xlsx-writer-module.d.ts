/**
 * exceljs' streaming workbook writer by its own module: the package's main entry also loads the reader, CSV and
 * unzip code, memory an export does not need. Same class as `ExcelJS.stream.xlsx.WorkbookWriter`, typed as it.
 */
declare module 'exceljs/lib/stream/xlsx/workbook-writer.js' {
  import type ExcelJS from 'exceljs';
  const WorkbookWriter: typeof ExcelJS.stream.xlsx.WorkbookWriter;
  export = WorkbookWriter;
}

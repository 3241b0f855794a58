import { LONE_SURROGATE } from '../names';

/**
 * CSV in the two forms people open (decision 432): plain RFC 4180 (`csv`:
 * comma, CRLF, fields with a comma, quote or line break quoted, quotes
 * doubled; for programs, every text exactly as stored) and the form Excel in
 * a Russian locale opens with a double click (`excel-ru`: a UTF-8 BOM, `;`
 * between fields, a decimal comma; a text that Excel would run as a formula —
 * one starting with = + - @ or a tab — is prefixed with an apostrophe).
 * Money and quantities arrive as exact decimal strings and only their point
 * is changed: no number is ever parsed, so no float rounds one.
 */

export const CSV_FORMATS = ['csv', 'excel-ru'] as const;
export type CsvFormat = (typeof CSV_FORMATS)[number];

/** A field: text, an exact decimal, a UTC time, or empty. */
export type Cell = string | { decimal: string } | { time: string } | null | undefined;

interface Dialect {
  sep: string;
  bom: string;
  decimalComma: boolean;
  guardFormulas: boolean;
  /** ISO (csv) or "YYYY-MM-DD HH:MM:SS" (Excel reads it as a date and time). */
  spreadsheetTimes: boolean;
}

const DIALECTS: Record<CsvFormat, Dialect> = {
  csv: { sep: ',', bom: '', decimalComma: false, guardFormulas: false, spreadsheetTimes: false },
  'excel-ru': { sep: ';', bom: '\uFEFF', decimalComma: true, guardFormulas: true, spreadsheetTimes: true },
};

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8; header=present';

/** Lone surrogates (no UTF-8 form) as U+FFFD, what an encoder writes for them anyway: the file stays valid UTF-8. */
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');
export const wellFormed = (text: string) => text.replace(LONE_SURROGATES, '\uFFFD');

const FORMULA_START = /^[=+\-@\t\r]/;
const EXACT = /^-?\d+(\.\d+)?$/;

function field(d: Dialect, cell: Cell): string {
  if (cell === null || cell === undefined) return '';
  let text: string;
  if (typeof cell === 'object' && 'decimal' in cell) {
    // Ours, canonical: refuse anything else rather than write a number Excel would misread.
    if (!EXACT.test(cell.decimal)) throw new Error(`not an exact decimal: ${JSON.stringify(cell.decimal)}`);
    return d.decimalComma ? cell.decimal.replace('.', ',') : cell.decimal;
  }
  if (typeof cell === 'object') {
    text = d.spreadsheetTimes ? cell.time.replace('T', ' ').replace(/(\.\d+)?Z$/, '') : cell.time;
  } else {
    // Upstream text: a lone surrogate becomes U+FFFD, as UTF-8 must write it anyway.
    text = wellFormed(cell);
    if (d.guardFormulas && FORMULA_START.test(text)) text = `'${text}`;
  }
  return text.includes(d.sep) || /["\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One record, CRLF-terminated. */
export function csvLine(format: CsvFormat, cells: readonly Cell[]): string {
  const d = DIALECTS[format];
  return cells.map((c) => field(d, c)).join(d.sep) + '\r\n';
}

/** What a file starts with before its header line: the BOM of the Excel form. */
export const csvStart = (format: CsvFormat): string => DIALECTS[format].bom;

/** A column: its header per form (stable field names for programs, Russian for Excel in Russian) and its cell. */
export interface Column<T> {
  name: string;
  ru: string;
  cell: (row: T) => Cell;
}

export const headerLine = <T>(format: CsvFormat, columns: readonly Column<T>[]) =>
  csvLine(
    format,
    columns.map((c) => (format === 'excel-ru' ? c.ru : c.name)),
  );

/**
 * The bytes a text takes inside the Lambda answer (a JSON string): quotes,
 * backslashes and control characters are escaped there, so a CSV of quotes
 * weighs up to twice its own size against the 6 MB bound.
 */
export const answerBytes = (text: string): number => Buffer.byteLength(JSON.stringify(text), 'utf8') - 2;

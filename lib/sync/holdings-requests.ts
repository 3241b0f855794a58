import { ErrorCode, HttpError } from '../http/errors';
import { validator } from '../http/request';
import { CSV_FORMATS, type CsvFormat } from './csv';
import { EXPORT_DATASETS, type ExportDataset } from './exports';

/** The holdings routes' query contracts (JSON Schema): an unknown field or a bad value is a 400, a bad path a 404. */

const DAY = '^\\d{4}-\\d{2}-\\d{2}$';
// An operations page's cursor: the instant of the previous page's last operation, as stored (ISO, up to nanoseconds).
const INSTANT = '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z$';

const parseDays = validator<{ from?: string; to?: string }>({
  type: 'object',
  properties: { from: { type: 'string', pattern: DAY }, to: { type: 'string', pattern: DAY } },
  additionalProperties: false,
});

const realDay = (day: string | undefined) => {
  if (day === undefined) return undefined;
  if (new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day)
    throw new HttpError(400, ErrorCode.INVALID_REQUEST, '`from` and `to` must be real dates (YYYY-MM-DD)');
  return day;
};

const checked = (from?: string, to?: string) => {
  const range = { from: realDay(from), to: realDay(to) };
  if (range.from && range.to && range.from > range.to)
    throw new HttpError(400, ErrorCode.INVALID_REQUEST, '`from` must not be after `to`');
  return range;
};

/** `?from=YYYY-MM-DD&to=YYYY-MM-DD` on the payment date, both days included, either optional. */
export function parseCalendarQuery(query: Record<string, string | undefined>): { from?: string; to?: string } {
  const q = parseDays(query);
  return checked(q.from, q.to);
}

const parseExport = validator<{ format?: CsvFormat; from?: string; to?: string; after?: string }>({
  type: 'object',
  properties: {
    format: { type: 'string', enum: [...CSV_FORMATS] },
    from: { type: 'string', pattern: DAY },
    to: { type: 'string', pattern: DAY },
    after: { type: 'string', pattern: INSTANT },
  },
  additionalProperties: false,
});

export interface ExportQuery {
  dataset: ExportDataset;
  format: CsvFormat;
  from?: string;
  to?: string;
  after?: string;
}

/** `{dataset}` (404 when it names none) and `?format=csv|excel-ru` (csv by default), `from`/`to`, `after` (operations). */
export function parseExportQuery(dataset: string | undefined, query: Record<string, string | undefined>): ExportQuery {
  if (!(EXPORT_DATASETS as readonly string[]).includes(dataset ?? ''))
    throw new HttpError(404, ErrorCode.NOT_FOUND, 'not found');
  const q = parseExport(query);
  if (dataset === 'positions' && (q.from || q.to))
    throw new HttpError(400, ErrorCode.INVALID_REQUEST, 'positions are as of the last sync: no `from` or `to`');
  if (dataset !== 'operations' && q.after)
    throw new HttpError(400, ErrorCode.INVALID_REQUEST, 'only the operations export has pages (`after`)');
  return { dataset: dataset as ExportDataset, format: q.format ?? 'csv', ...checked(q.from, q.to), after: q.after };
}

/** The feed's query: its token and, optionally, the language of its texts. */
export const parseFeedQuery = validator<{ token?: string; lang?: 'en' | 'ru' }>({
  type: 'object',
  properties: { token: { type: 'string', maxLength: 128 }, lang: { type: 'string', enum: ['en', 'ru'] } },
  additionalProperties: false,
});

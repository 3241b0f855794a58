import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { CSV_CONTENT_TYPE } from '../../lib/sync/csv';
import { calendarCsv, EXPORT_PAGE_BYTES, operationsCsvPage, positionsCsv } from '../../lib/sync/exports';
import { parseExportQuery } from '../../lib/sync/holdings-requests';
import { holdingsServices } from '../../lib/sync/holdings-wiring';
import { syncLog, syncServices } from '../../lib/sync/wiring';

const FAR_PAST = '1970-01-01T00:00:00.000Z';
const FAR_FUTURE = '9999-01-01T00:00:00.000Z';
const dayStart = (day: string) => `${day}T00:00:00.000Z`;
const dayAfter = (day: string) => new Date(Date.parse(dayStart(day)) + 86_400_000).toISOString();

/**
 * GET /sync/{user}/exports/{operations|positions|calendar}?format=csv|excel-ru → a CSV attachment.
 * Operations come in pages of at most EXPORT_PAGE_BYTES: a next page is named by the `Link: <…>; rel="next"`
 * header (and `x-next-after`), absent on the last one.
 */
export const handler = httpHandler(syncLog, async (event) => {
  const user = pathId(event, 'user');
  const q = parseExportQuery(event.pathParameters?.dataset, event.queryStringParameters ?? {});
  const { holdings } = holdingsServices();
  const headers: Record<string, string> = { 'content-type': CSV_CONTENT_TYPE, 'cache-control': 'no-store' };
  const range = [q.from, q.to].filter(Boolean).join('_');
  let body: string;
  let name = `${q.dataset}${range ? `-${range}` : ''}`;
  if (q.dataset === 'operations') {
    const from = q.from ? dayStart(q.from) : FAR_PAST;
    // A later page reads from its cursor's instant on, not from the range's start again.
    const since = q.after && q.after > from ? q.after : from;
    const ops = await syncServices().data.operations(user, since, q.to ? dayAfter(q.to) : FAR_FUTURE);
    const page = operationsCsvPage(q.format, ops, EXPORT_PAGE_BYTES, q.after);
    body = page.body;
    if (q.after) name += `-after-${q.after.replace(/[:.]/g, '')}`;
    if (page.next) {
      const next = new URLSearchParams({
        format: q.format,
        ...(q.from ? { from: q.from } : {}),
        ...(q.to ? { to: q.to } : {}),
        after: page.next,
      });
      headers.link = `</sync/${user}/exports/operations?${next}>; rel="next"`;
      headers['x-next-after'] = page.next;
    }
  } else if (q.dataset === 'positions') {
    body = positionsCsv(q.format, (await holdings.portfolio(user)).accounts);
  } else {
    body = calendarCsv(q.format, (await holdings.calendar(user, q)).items);
  }
  headers['content-disposition'] = `attachment; filename="${name}${q.format === 'excel-ru' ? '-excel' : ''}.csv"`;
  return { statusCode: 200, headers, body };
});

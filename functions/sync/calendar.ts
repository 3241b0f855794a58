import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { parseCalendarQuery } from '../../lib/sync/holdings-requests';
import { holdingsServices } from '../../lib/sync/holdings-wiring';
import { syncLog } from '../../lib/sync/wiring';

/** GET /sync/{user}/calendar?from=YYYY-MM-DD&to=YYYY-MM-DD (payment dates, both included) → the held instruments' payments. */
export const handler = httpHandler(syncLog, async (event) => {
  const user = pathId(event, 'user');
  const range = parseCalendarQuery(event.queryStringParameters ?? {});
  return json(200, await holdingsServices().holdings.calendar(user, range));
});

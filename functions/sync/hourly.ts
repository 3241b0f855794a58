import { ErrorCode, HttpError } from '../../lib/http/errors';
import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { hourlyView } from '../../lib/sync/views';
import { log, syncDeps } from './deps';

/** GET /sync/{user}/hourly → {state, meta}. */
export const handler = httpHandler(log, async (event) => {
  const head = await syncDeps().hourly.head(pathId(event, 'user'));
  if (!head) throw new HttpError(404, ErrorCode.NOT_FOUND, 'no hourly sync for this user yet');
  return json(200, hourlyView(head));
});

import { ErrorCode, HttpError } from '../../lib/http/errors';
import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { hourlyView, queuedView } from '../../lib/sync/views';
import { log, syncDeps } from './deps';

/** GET /sync/{user}/hourly → {state, meta}; a connection waiting for its first sync → state `queued` and its `queue`. */
export const handler = httpHandler(log, async (event) => {
  const user = pathId(event, 'user');
  const { hourly, connections, admit } = syncDeps();
  const head = await hourly.head(user);
  if (head) return json(200, hourlyView(head));
  const queue = await connections.firstSyncQueue(user, Date.now(), admit);
  if (!queue) throw new HttpError(404, ErrorCode.NOT_FOUND, 'no hourly sync for this user yet');
  return json(200, queuedView(queue));
});

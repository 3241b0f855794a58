import { ErrorCode, HttpError } from '../../lib/http/errors';
import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { log, syncDeps } from './deps';

/**
 * DELETE /sync/connections/{user} → 204. The connection and its hourly head go in one transaction, so
 * the user leaves the due index with them; a running attempt's later writes are refused by the fence.
 */
export const handler = httpHandler(log, async (event) => {
  const user = pathId(event, 'user');
  if (!(await syncDeps().connections.removeConnection(user)))
    throw new HttpError(404, ErrorCode.NOT_FOUND, 'no connection for this user');
  log.info('sync_connection_removed', { user_id: user });
  return { statusCode: 204, headers: { 'cache-control': 'no-store' }, body: '' };
});

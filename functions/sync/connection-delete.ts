import { ErrorCode, HttpError } from '../../lib/http/errors';
import { httpHandler } from '../../lib/http/handler';
import { authorizedPrincipal } from '../../lib/http/middlewares';
import { pathId } from '../../lib/http/request';
import { audit, AUDIT_EVENTS } from '../../lib/log/audit';
import { log, syncDeps } from './deps';

/**
 * DELETE /sync/connections/{user} → 204. The connection and its hourly head go in one transaction, so
 * the user leaves the due index with them; a running attempt's later writes are refused by the fence.
 */
export const handler = httpHandler(log, async (event) => {
  const user = pathId(event, 'user');
  if (!(await syncDeps().connections.removeConnection(user)))
    throw new HttpError(404, ErrorCode.NOT_FOUND, 'no connection for this user');
  audit(log, AUDIT_EVENTS.connectionRemoved, { principal: authorizedPrincipal(event), via: 'api' }, { user_id: user });
  return { statusCode: 204, headers: { 'cache-control': 'no-store' }, body: '' };
});

import { parseId } from '../../lib/ident';
import { httpHandler } from '../../lib/http/handler';
import { jsonBody } from '../../lib/http/request';
import { authorizedPrincipal } from '../../lib/http/middlewares';
import { json } from '../../lib/http/response';
import { audit, AUDIT_EVENTS } from '../../lib/log/audit';
import { redactValue } from '../../lib/log';
import { log, syncDeps } from './deps';
import { parseConnection } from '../../lib/sync/requests';

/**
 * POST /sync/connections {user_id, token} → 201 {user_id, created_at}; the token is never returned.
 * Who saved it is logged (a new connection or a replaced token: the same write).
 */
export const handler = httpHandler(log, async (event) => {
  const body = parseConnection(jsonBody(event));
  // From here no line of this invocation prints it, not even a store error's message.
  redactValue(body.token);
  const user = parseId(body.user_id);
  const connection = await syncDeps().connections.putConnection(user, body.token, Date.now());
  audit(log, AUDIT_EVENTS.connectionSaved, { principal: authorizedPrincipal(event), via: 'api' }, { user_id: user });
  return json(201, connection);
});

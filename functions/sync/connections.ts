import { parseId } from '../../lib/ident';
import { httpHandler } from '../../lib/http/handler';
import { jsonBody } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { redactValue } from '../../lib/log';
import { log, syncDeps } from './deps';
import { parseConnection } from '../../lib/sync/requests';

/** POST /sync/connections {user_id, token} → 201 {user_id, created_at}; the token is never returned. */
export const handler = httpHandler(log, async (event) => {
  const body = parseConnection(jsonBody(event));
  // From here no line of this invocation prints it, not even a store error's message.
  redactValue(body.token);
  const user = parseId(body.user_id);
  const connection = await syncDeps().connections.putConnection(user, body.token, Date.now());
  log.info('sync_connection_saved', { user_id: user });
  return json(201, connection);
});

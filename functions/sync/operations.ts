import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { operationsView } from '../../lib/sync/views';
import { log, syncDeps } from './deps';
import { parseOperationsQuery } from '../../lib/sync/requests';

/** GET /sync/{user}/operations?from=YYYY-MM-DD&to=YYYY-MM-DD (both days included) → the current generations' operations. */
export const handler = httpHandler(log, async (event) => {
  const user = pathId(event, 'user');
  const { from, to } = parseOperationsQuery(event.queryStringParameters ?? {});
  return json(200, operationsView(await syncDeps().data.operations(user, from, to)));
});

import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { holdingsServices } from '../../lib/sync/holdings-wiring';
import { syncLog } from '../../lib/sync/wiring';

/** GET /sync/{user}/portfolio → per account, the positions the last successful portfolio step stored, and their freshness. */
export const handler = httpHandler(syncLog, async (event) => {
  const user = pathId(event, 'user');
  return json(200, await holdingsServices().holdings.portfolio(user));
});

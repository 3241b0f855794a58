import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { log, syncDeps } from './deps';
import { parseOperationsQuery } from './requests';

/** GET /sync/{user}/operations?from=YYYY-MM-DD&to=YYYY-MM-DD → what the operations steps stored. */
export const handler = httpHandler(log, async (event) => {
  const user = pathId(event, 'user');
  const { from, to } = parseOperationsQuery(event.queryStringParameters ?? {});
  const items = await syncDeps().store.query(user, `OP#${from ?? '0000-00-00'}`, `OP#${to ?? '9999-99-99'}#~`);
  const operations = items.map(({ PK: _pk, SK: _sk, entity: _e, user_id: _u, ...op }) => op);
  return json(200, { items: operations });
});

import { ErrorCode, HttpError } from '../../lib/http/errors';
import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { holdingsServices } from '../../lib/sync/holdings-wiring';
import { syncLog } from '../../lib/sync/wiring';

/**
 * The calendar feed's tokens (sync:admin): POST /sync/{user}/feed-tokens → 201 with the token, shown this
 * once, and the feed's path; GET → the user's tokens by id (never a token or its hash); DELETE
 * /sync/{user}/feed-tokens/{token_id} → 204, the feed refuses it from the next request on.
 */
export const handler = httpHandler(syncLog, async (event) => {
  const user = pathId(event, 'user');
  const { feeds } = holdingsServices();
  switch (event.routeKey) {
    case 'POST /sync/{user}/feed-tokens': {
      const created = await feeds.create(user, Date.now());
      if (!created) throw new HttpError(404, ErrorCode.NOT_FOUND, 'no sync connection for this user');
      const { token, ...record } = created;
      return json(201, { ...record, token, feed_path: `/sync/${user}/calendar.ics?token=${token}` });
    }
    case 'GET /sync/{user}/feed-tokens':
      return json(200, { items: await feeds.list(user) });
    default: {
      const tokenId = pathId(event, 'token_id');
      if (!(await feeds.revoke(user, tokenId))) throw new HttpError(404, ErrorCode.NOT_FOUND, 'no such feed token');
      return { statusCode: 204, headers: { 'cache-control': 'no-store' }, body: '' };
    }
  }
});

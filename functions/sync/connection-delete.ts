import { systemClock } from '../../lib/clock';
import { ErrorCode, HttpError } from '../../lib/http/errors';
import { httpHandler } from '../../lib/http/handler';
import { authorizedPrincipal } from '../../lib/http/middlewares';
import { pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { audit, AUDIT_EVENTS } from '../../lib/log/audit';
import { deleteConnection } from '../../lib/sync/connections';
import { log, syncDeps } from './deps';

/** One call's share of a purge: well inside the function's 10 s, and a bounded number of deletes. */
export const PURGE_BOUND = { maxItems: 5000, ms: 5000 };
/** Past a step's own bound (SYNC_STEP_TIMEOUT_MS, 25 s): a step running at the delete has stopped writing by then. */
const STEP_GONE_S = 30;

/**
 * DELETE /sync/connections/{user} → 204 when the connection and every item of the user's synced data are
 * gone; 202 `{"status":"purging"}` with Retry-After when the connection is gone and data is left, or an
 * attempt was running (its steps may still write for up to 30 s): call again, each call goes on from where the
 * last stopped, until 204 or 404; 404 when there was neither connection nor data. The connection and its hourly
 * head go in one transaction, so the user leaves the due index with them; a running attempt's later writes are
 * refused by the fence (lib/sync/connections.ts deleteConnection; docs/sync.md).
 */
export const handler = httpHandler(log, async (event) => {
  const user = pathId(event, 'user');
  const now = systemClock();
  const { removed, purge, running } = await deleteConnection(syncDeps(), user, {
    maxItems: PURGE_BOUND.maxItems,
    deadline: now + PURGE_BOUND.ms,
    now: systemClock,
  });
  if (!removed && purge.done && purge.deleted === 0)
    throw new HttpError(404, ErrorCode.NOT_FOUND, 'no connection for this user');
  audit(
    log,
    AUDIT_EVENTS.connectionRemoved,
    { principal: authorizedPrincipal(event), via: 'api' },
    { user_id: user, removed, purged: purge.deleted, purge_done: purge.done },
  );
  if (!purge.done || running)
    return json(
      202,
      { status: 'purging', deleted: purge.deleted, ...(running ? { attempt_running: true } : {}) },
      { 'retry-after': String(running ? STEP_GONE_S : 1) },
    );
  return { statusCode: 204, headers: { 'cache-control': 'no-store' }, body: '' };
});

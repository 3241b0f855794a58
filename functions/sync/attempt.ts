import { ErrorCode, HttpError } from '../../lib/http/errors';
import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { attemptView } from '../../lib/sync/views';
import { log, syncDeps } from './deps';

/** GET /sync/attempts/{attempt} → the attempt with its sections and their step rows. */
export const handler = httpHandler(log, async (event) => {
  const attempt = await syncDeps().hourly.attempt(pathId(event, 'attempt'));
  if (!attempt) throw new HttpError(404, ErrorCode.NOT_FOUND, 'attempt not found');
  return json(200, attemptView(attempt));
});

import { toDto } from '../../lib/downloads/model';
import { keepWaiting } from '../../lib/downloads/service';
import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { log } from './deps';

/** POST /downloads/{id}/keep-waiting → 200 (the timeout clock restarted once, the warning cleared; idempotent); 409 on a finished download. */
export const handler = httpHandler(log, async (event) => {
  const id = pathId(event);
  return json(200, toDto(await keepWaiting(downloadsDeps(), id)));
});

import { toDto } from '../../lib/downloads/model';
import { retry } from '../../lib/downloads/service';
import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { log } from './deps';

/** POST /downloads/{id}/retry → 200; 409 ACTIVE_EXISTS when another download holds a hash; 502 when the client refuses (state rolled back). */
export const handler = httpHandler(log, async (event) => {
  const id = pathId(event);
  return json(200, toDto(await retry(downloadsDeps(), id)));
});

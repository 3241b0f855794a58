import { toDto } from '../../lib/downloads/model';
import { changeState } from '../../lib/downloads/service';
import { httpHandler } from '../../lib/http/handler';
import { jsonBody, pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { log } from './deps';
import { parseStateChange } from '../../lib/downloads/requests';

/** POST /downloads/{id}/state {"state": ...} → 200; 409 INVALID_TRANSITION. */
export const handler = httpHandler(log, async (event) => {
  const id = pathId(event);
  const { state } = parseStateChange(jsonBody(event));
  return json(200, toDto(await changeState(downloadsDeps(), id, state)));
});

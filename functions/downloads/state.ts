import { toDto } from '../../lib/downloads/model';
import { changeState } from '../../lib/downloads/service';
import { httpHandler } from '../../lib/http/handler';
import { jsonBody, pathId } from '../../lib/http/request';
import { authorizedPrincipal } from '../../lib/http/middlewares';
import { json } from '../../lib/http/response';
import { audit, AUDIT_EVENTS } from '../../lib/log/audit';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { log } from './deps';
import { parseStateChange } from '../../lib/downloads/requests';

/** POST /downloads/{id}/state {"state": ...} → 200; 409 INVALID_TRANSITION. */
export const handler = httpHandler(log, async (event) => {
  const id = pathId(event);
  const { state } = parseStateChange(jsonBody(event));
  const changed = await changeState(downloadsDeps(), id, state);
  if (state === 'cancelled')
    audit(
      log,
      AUDIT_EVENTS.downloadCancelled,
      { principal: authorizedPrincipal(event), via: 'api' },
      { download_id: id },
    );
  return json(200, toDto(changed));
});

import { toDto } from '../../lib/downloads/model';
import { addHashes } from '../../lib/downloads/service';
import { httpHandler } from '../../lib/http/handler';
import { jsonBody, pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { log } from './deps';
import { parseAddInfohashes } from '../../lib/downloads/requests';

/** POST /downloads/{id}/infohashes {"infohashes": [...]} → 200; 409 INFOHASH_TAKEN with the owner. */
export const handler = httpHandler(log, async (event) => {
  const id = pathId(event);
  const { infohashes } = parseAddInfohashes(jsonBody(event));
  return json(200, toDto(await addHashes(downloadsDeps(), id, infohashes)));
});

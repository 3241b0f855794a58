import { toDto } from '../../lib/downloads/model';
import { getDownload } from '../../lib/downloads/service';
import { httpHandler } from '../../lib/http/handler';
import { pathId } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { log } from './deps';

/** GET /downloads/{id} */
export const handler = httpHandler(log, async (event) =>
  json(200, toDto(await getDownload(downloadsDeps(), pathId(event)))),
);

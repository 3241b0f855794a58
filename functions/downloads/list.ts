import { toDto } from '../../lib/downloads/model';
import { listDownloads } from '../../lib/downloads/service';
import { httpHandler } from '../../lib/http/handler';
import { json } from '../../lib/http/response';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { log } from './deps';
import { parseListQuery } from '../../lib/downloads/requests';

/** GET /downloads?q=&limit=&cursor= → newest first; `q` is an infohash prefix (4+ hex) or a name fragment. */
export const handler = httpHandler(log, async (event) => {
  const page = await listDownloads(downloadsDeps(), parseListQuery(event.queryStringParameters));
  return json(200, { items: page.items.map(toDto), ...(page.cursor ? { cursor: page.cursor } : {}) });
});

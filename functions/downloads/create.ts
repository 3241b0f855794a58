import { toDto } from '../../lib/downloads/model';
import { ingest } from '../../lib/downloads/service';
import { httpHandler } from '../../lib/http/handler';
import { jsonBody } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { downloadsDeps, log } from './deps';
import { parseIngest } from './requests';

/** POST /downloads → 201 created, 200 the existing active download (with any new hashes appended). */
export const handler = httpHandler(log, async (event) => {
  const { created, download } = await ingest(downloadsDeps(), parseIngest(jsonBody(event)));
  return json(created ? 201 : 200, toDto(download), created ? { location: `/downloads/${download.id}` } : {});
});

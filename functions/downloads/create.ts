import { toDto } from '../../lib/downloads/model';
import { ingest } from '../../lib/downloads/service';
import { authorizedPrincipal, httpHandler } from '../../lib/http/handler';
import { jsonBody } from '../../lib/http/request';
import { HttpResult, json } from '../../lib/http/response';
import { idempotencyKeyOf, idempotent } from '../../lib/idempotency/service';
import type { StoredResponse } from '../../lib/idempotency/store';
import { downloadsDeps, idempotencyDeps, log } from './deps';
import { parseIngest } from './requests';

/**
 * POST /downloads → 201 created, 200 the existing active download (with any new hashes appended).
 * With an `Idempotency-Key` header a retry gets the first answer replayed (lib/idempotency).
 */
export const handler = httpHandler(log, async (event) => {
  const clientKey = idempotencyKeyOf(event.headers);
  const body = jsonBody(event);
  const request = parseIngest(body);
  const principal = authorizedPrincipal(event)!; // httpHandler refused the event otherwise
  const answer = await idempotent(
    idempotencyDeps(),
    { route: 'POST /downloads', principal, clientKey, payload: body },
    async () => {
      const { created, download } = await ingest(downloadsDeps(), request);
      return json(
        created ? 201 : 200,
        toDto(download),
        created ? { location: `/downloads/${download.id}` } : {},
      ) as StoredResponse;
    },
  );
  return answer as HttpResult;
});

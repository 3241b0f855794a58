import { toDto } from '../../lib/downloads/model';
import { ingest } from '../../lib/downloads/service';
import { httpHandler } from '../../lib/http/handler';
import { jsonBody } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { idempotency } from '../../lib/idempotency/middleware';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { idempotencyDeps, log } from './deps';
import { parseIngest } from '../../lib/downloads/requests';

/**
 * POST /downloads → 201 created, 200 the existing active download (with any new hashes appended).
 * With an `Idempotency-Key` header a retry gets the first answer replayed (lib/idempotency).
 */
export const handler = httpHandler(
  log,
  async (event) => {
    const { created, download } = await ingest(downloadsDeps(), parseIngest(jsonBody(event)));
    return json(created ? 201 : 200, toDto(download), created ? { location: `/downloads/${download.id}` } : {});
  },
  {
    use: [
      idempotency({
        route: 'POST /downloads',
        deps: idempotencyDeps,
        // The body as sent (canonical JSON) is the payload; it is validated first, so bad input leaves no record.
        payload: (event) => {
          const body = jsonBody(event);
          parseIngest(body);
          return body;
        },
      }),
    ],
  },
);

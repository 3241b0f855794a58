import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { toDto } from '../../lib/downloads/model';
import { ingest, type IngestRequest } from '../../lib/downloads/service';
import { httpHandler } from '../../lib/http/handler';
import { isMultipart, multipartBody } from '../../lib/http/multipart';
import { jsonBody } from '../../lib/http/request';
import { json } from '../../lib/http/response';
import { idempotency } from '../../lib/idempotency/middleware';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { idempotencyDeps, log } from './deps';
import { MAX_TORRENT_BODY_BYTES, parseIngest, parseIngestMultipart } from '../../lib/downloads/requests';

/**
 * POST /downloads → 201 created, 200 the existing active download (with any new hashes appended).
 * JSON (`magnet`, `infohashes`, or a base64 `.torrent` in `torrent_base64`), or multipart/form-data with the
 * file in the part `torrent` (decision 403). With an `Idempotency-Key` header a retry gets the first answer
 * replayed (lib/idempotency).
 */
export const handler = httpHandler(
  log,
  async (event) => {
    const { created, download } = await ingest(downloadsDeps(), requestOf(event));
    return json(created ? 201 : 200, toDto(download), created ? { location: `/downloads/${download.id}` } : {});
  },
  {
    use: [
      idempotency({
        route: 'POST /downloads',
        deps: idempotencyDeps,
        // The body as sent (canonical JSON) is the payload; it is validated first, so bad input leaves no record.
        // A .torrent stands in it by its SHA-256 (the file itself can be megabytes).
        payload: (event) => {
          const request = requestOf(event);
          if (!('torrent' in request)) return torrentOrSmallJson(event);
          return { torrent_sha256: createHash('sha256').update(request.torrent).digest('hex'), name: request.name };
        },
      }),
    ],
  },
);

// Read once per event: the idempotency payload and the core see one parse of a (possibly large) body.
const parsed = new WeakMap<object, IngestRequest>();

function requestOf(event: APIGatewayProxyEventV2): IngestRequest {
  let request = parsed.get(event);
  if (!request) {
    request = isMultipart(event.headers)
      ? parseIngestMultipart(multipartBody(event, MAX_TORRENT_BODY_BYTES))
      : parseIngest(torrentOrSmallJson(event));
    parsed.set(event, request);
  }
  return request;
}

/** Only a body carrying `torrent_base64` may pass MAX_BODY_BYTES: a magnet or hash list keeps the 64 KiB bound. */
function torrentOrSmallJson(event: APIGatewayProxyEventV2): unknown {
  const body = jsonBody(event, MAX_TORRENT_BODY_BYTES);
  const torrent = typeof body === 'object' && body !== null && 'torrent_base64' in body;
  if (!torrent) jsonBody(event); // the usual bound, and its 413
  return body;
}

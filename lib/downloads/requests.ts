import { MAX_INFOHASHES } from './infohash';
import { MAX_TIMEOUT_S } from './lifecycle';
import { MAX_MAGNET_LENGTH } from './magnet';
import { DOWNLOAD_STATES, DownloadState } from './model';
import type { IngestRequest, ListRequest } from './service';
import { ErrorCode, HttpError } from '../http/errors';
import { validator } from '../http/request';

/** Request contracts of the downloads API: unknown fields are refused, every string and list is bounded. */

const infohashList = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_INFOHASHES,
  items: { type: 'string', minLength: 1, maxLength: 128 },
};

/** Per-download timeouts (lifecycle.ts): whole seconds, 0 = never, at most 30 days. */
const timeouts = {
  metadata_timeout_s: { type: 'integer', minimum: 0, maximum: MAX_TIMEOUT_S },
  stall_timeout_s: { type: 'integer', minimum: 0, maximum: MAX_TIMEOUT_S },
};

// if/then/else, not oneOf: the error then names the problem of the shape the caller chose.
export const parseIngest = validator<IngestRequest>({
  type: 'object',
  if: { type: 'object', properties: { magnet: true }, required: ['magnet'] },
  then: {
    type: 'object',
    properties: { magnet: { type: 'string', minLength: 1, maxLength: MAX_MAGNET_LENGTH }, ...timeouts },
    required: ['magnet'],
    additionalProperties: false,
  },
  else: {
    type: 'object',
    properties: { infohashes: infohashList, name: { type: 'string', maxLength: 1024 }, ...timeouts },
    required: ['infohashes'],
    additionalProperties: false,
  },
});

export const parseStateChange = validator<{ state: DownloadState }>({
  type: 'object',
  properties: { state: { type: 'string', enum: [...DOWNLOAD_STATES] } },
  required: ['state'],
  additionalProperties: false,
});

export const parseAddInfohashes = validator<{ infohashes: string[] }>({
  type: 'object',
  properties: { infohashes: infohashList },
  required: ['infohashes'],
  additionalProperties: false,
});

export const MAX_LIST_LIMIT = 100;

const parseListShape = validator<{ q?: string; state?: DownloadState; limit?: string; cursor?: string }>({
  type: 'object',
  properties: {
    // Free text matched literally (never an expression); control characters are refused.
    q: { type: 'string', maxLength: 128, pattern: '^[^\\u0000-\\u001f\\u007f]*$' },
    state: { type: 'string', enum: [...DOWNLOAD_STATES] },
    limit: { type: 'string', pattern: '^[0-9]{1,3}$' },
    cursor: { type: 'string', maxLength: 256 },
  },
  additionalProperties: false,
});

export function parseListQuery(query: Record<string, string | undefined> | undefined): ListRequest {
  const shaped = parseListShape(query ?? {});
  const limit = shaped.limit === undefined ? 20 : Number(shaped.limit);
  if (limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new HttpError(400, ErrorCode.INVALID_REQUEST, `limit must be between 1 and ${MAX_LIST_LIMIT}`, {
      limit: MAX_LIST_LIMIT,
    });
  }
  return { q: shaped.q || undefined, state: shaped.state, limit, cursor: shaped.cursor || undefined };
}

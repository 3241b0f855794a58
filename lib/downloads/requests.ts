import { type CategoryChoice, MAX_CATEGORY_LENGTH, MAX_SAVE_PATH_LENGTH } from './category';
import { MAX_INFOHASHES } from './infohash';
import { MAX_TIMEOUT_S } from './lifecycle';
import { MAX_MAGNET_LENGTH } from './magnet';
import { DOWNLOAD_STATES, DownloadState } from './model';
import type { IngestRequest, ListRequest, TimeoutOverrides } from './service';
import { MAX_TORRENT_BYTES } from './torrent-file';
import { MAX_SHARE_RATIO, MAX_SHARE_TIME_S, SHARE_ACTIONS, ShareAction } from './share-goals';
import { ErrorCode, HttpError } from '../http/errors';
import type { MultipartPart } from '../http/multipart';
import { MAX_BODY_BYTES, validator } from '../http/request';

/** Request contracts of the downloads API: unknown fields are refused, every string and list is bounded. */

const infohashList = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_INFOHASHES,
  items: { type: 'string', minLength: 1, maxLength: 128 },
};

/** A .torrent as base64 in JSON: standard alphabet, padded (RFC 4648 §4), at most MAX_TORRENT_BYTES decoded. */
export const MAX_TORRENT_BASE64_LENGTH = Math.ceil(MAX_TORRENT_BYTES / 3) * 4;
/** POST /downloads bodies: 64 KiB, or room for a .torrent (multipart, or base64 in JSON) and its few fields. */
export const MAX_TORRENT_BODY_BYTES = MAX_TORRENT_BASE64_LENGTH + MAX_BODY_BYTES;

/** Per-download timeouts (lifecycle.ts): whole seconds, 0 = never, at most 30 days. */
const timeouts = {
  metadata_timeout_s: { type: 'integer', minimum: 0, maximum: MAX_TIMEOUT_S },
  stall_timeout_s: { type: 'integer', minimum: 0, maximum: MAX_TIMEOUT_S },
  // The seeding goal (share-goals.ts): a ratio, seconds of seeding (0 = none), and what happens when met.
  share_ratio: { type: 'number', minimum: 0, maximum: MAX_SHARE_RATIO },
  share_time_s: { type: 'integer', minimum: 0, maximum: MAX_SHARE_TIME_S },
  share_action: { type: 'string', enum: [...SHARE_ACTIONS] },
} as const;

/** A download's category (category.ts): a name in the default category's tree, a new one's relative save path. */
const categoryFields = {
  category: { type: 'string', minLength: 1, maxLength: MAX_CATEGORY_LENGTH },
  category_save_path: { type: 'string', minLength: 1, maxLength: MAX_SAVE_PATH_LENGTH },
} as const;

/** The JSON shapes of POST /downloads, one schema: OpenAPI's document shows this one (lib/http/openapi.ts). */
export const ingestBodySchema = {
  type: 'object',
  // if/then/else, not oneOf: the error then names the problem of the shape the caller chose.
  if: { type: 'object', properties: { magnet: true }, required: ['magnet'] },
  then: {
    type: 'object',
    properties: {
      magnet: { type: 'string', minLength: 1, maxLength: MAX_MAGNET_LENGTH },
      ...timeouts,
      ...categoryFields,
    },
    required: ['magnet'],
    additionalProperties: false,
  },
  else: {
    if: { type: 'object', properties: { torrent_base64: true }, required: ['torrent_base64'] },
    then: {
      type: 'object',
      properties: {
        torrent_base64: {
          type: 'string',
          minLength: 4,
          maxLength: MAX_TORRENT_BASE64_LENGTH,
          pattern: '^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$',
        },
        name: { type: 'string', maxLength: 1024 },
        ...timeouts,
        ...categoryFields,
      },
      required: ['torrent_base64'],
      additionalProperties: false,
    },
    else: {
      type: 'object',
      properties: {
        infohashes: infohashList,
        name: { type: 'string', maxLength: 1024 },
        ...timeouts,
        ...categoryFields,
      },
      required: ['infohashes'],
      additionalProperties: false,
    },
  },
} as const;

type IngestBody = (
  { magnet: string } | { torrent_base64: string; name?: string } | { infohashes: string[]; name?: string }
) &
  TimeoutOverrides &
  CategoryChoice;
const parseIngestBody = validator<IngestBody>(ingestBodySchema);

/** A JSON body of POST /downloads as the service's request (a base64 .torrent decoded to its bytes). */
export function parseIngest(body: unknown): IngestRequest {
  const shaped = parseIngestBody(body);
  if (!('torrent_base64' in shaped)) return shaped;
  const { torrent_base64: base64, name, ...overrides } = shaped;
  return { torrent: Buffer.from(base64, 'base64'), ...(name ? { name } : {}), ...overrides };
}

/** The seeding-goal fields of a form (multipart): text, read by the same bounds as the JSON's. */
const SHARE_PARTS = ['share_ratio', 'share_time_s', 'share_action'] as const;

function shareFromText(name: (typeof SHARE_PARTS)[number], text: string): number | ShareAction {
  const bad = (why: string) => new HttpError(400, ErrorCode.INVALID_REQUEST, `${name} ${why}`);
  if (name === 'share_action') {
    if (!(SHARE_ACTIONS as readonly string[]).includes(text)) throw bad(`must be one of ${SHARE_ACTIONS.join(', ')}`);
    return text as ShareAction;
  }
  if (name === 'share_ratio') {
    if (!/^\d{1,4}(\.\d{1,6})?$/.test(text) || Number(text) > MAX_SHARE_RATIO)
      throw bad(`must be a number of 0..${MAX_SHARE_RATIO}`);
    return Number(text);
  }
  return secondsFromText(name, text, MAX_SHARE_TIME_S);
}

/** The timeouts, as in JSON: whole seconds within 0..MAX_TIMEOUT_S. */
const TIMEOUT_PARTS = ['metadata_timeout_s', 'stall_timeout_s'] as const;

/** A whole number of seconds written as text (a form part): digits only, within 0..max. */
function secondsFromText(name: string, text: string, max: number): number {
  if (!/^\d{1,9}$/.test(text) || Number(text) > max)
    throw new HttpError(400, ErrorCode.INVALID_REQUEST, `${name} must be an integer of 0..${max}`);
  return Number(text);
}

/**
 * A multipart POST /downloads: the file in the part `torrent`, optional `name`, `category` and
 * `category_save_path`, the timeouts and the seeding-goal fields; any other part is refused, as an unknown JSON
 * field is.
 */
export function parseIngestMultipart(parts: MultipartPart[]): IngestRequest {
  const seen = new Set<string>();
  let torrent: Buffer | undefined;
  let name: string | undefined;
  const settings: Record<string, number | ShareAction> = {}; // the timeouts and the seeding goal
  const category: CategoryChoice = {};
  for (const part of parts) {
    if (seen.has(part.name))
      throw new HttpError(400, ErrorCode.INVALID_REQUEST, `the form has the part ${JSON.stringify(part.name)} twice`);
    seen.add(part.name);
    if (part.name === 'torrent') torrent = part.data;
    else if (part.name === 'name' && part.filename === undefined) name = part.data.toString('utf8');
    else if ((SHARE_PARTS as readonly string[]).includes(part.name) && part.filename === undefined) {
      const text = part.data.toString('utf8').trim();
      if (text) settings[part.name] = shareFromText(part.name as (typeof SHARE_PARTS)[number], text);
    } else if ((TIMEOUT_PARTS as readonly string[]).includes(part.name) && part.filename === undefined) {
      const text = part.data.toString('utf8').trim();
      if (text) settings[part.name] = secondsFromText(part.name, text, MAX_TIMEOUT_S);
    } else if ((part.name === 'category' || part.name === 'category_save_path') && part.filename === undefined) {
      const value = part.data.toString('utf8');
      if (value.length > categoryFields[part.name].maxLength)
        throw new HttpError(400, ErrorCode.INVALID_REQUEST, `${part.name} is too long`);
      if (value !== '') category[part.name] = value;
    } else
      throw new HttpError(
        400,
        ErrorCode.INVALID_REQUEST,
        `unknown form part ${JSON.stringify(part.name.slice(0, 40))}`,
      );
  }
  if (!torrent) throw new HttpError(400, ErrorCode.INVALID_REQUEST, 'the form has no "torrent" file part');
  if (name !== undefined && name.length > 1024)
    throw new HttpError(400, ErrorCode.INVALID_REQUEST, 'name must NOT have more than 1024 characters');
  return { torrent, ...(name?.trim() ? { name } : {}), ...settings, ...category };
}

export const stateChangeSchema = {
  type: 'object',
  properties: { state: { type: 'string', enum: [...DOWNLOAD_STATES] } },
  required: ['state'],
  additionalProperties: false,
};
export const parseStateChange = validator<{ state: DownloadState }>(stateChangeSchema);

export const addInfohashesSchema = {
  type: 'object',
  properties: { infohashes: infohashList },
  required: ['infohashes'],
  additionalProperties: false,
};
export const parseAddInfohashes = validator<{ infohashes: string[] }>(addInfohashesSchema);

export const MAX_LIST_LIMIT = 100;

export const listQuerySchema = {
  type: 'object',
  properties: {
    // Free text matched literally (never an expression); control characters are refused.
    q: { type: 'string', maxLength: 128, pattern: '^[^\\u0000-\\u001f\\u007f]*$' },
    state: { type: 'string', enum: [...DOWNLOAD_STATES] },
    limit: { type: 'string', pattern: '^[0-9]{1,3}$' },
    cursor: { type: 'string', maxLength: 256 },
  },
  additionalProperties: false,
};
const parseListShape = validator<{ q?: string; state?: DownloadState; limit?: string; cursor?: string }>(
  listQuerySchema,
);

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

import { MAX_SHARE_RATIO, MAX_SHARE_TIME_S, SHARE_ACTIONS } from './share-goals';
import { errorSchema, type JsonSchema, type Operations } from '../http/openapi';
import { DOWNLOAD_STATES, FAILURE_REASONS, HOLD_REASONS, REVIEW_REASONS } from './model';
import { MAX_CATEGORY_LENGTH, MAX_SAVE_PATH_LENGTH } from './category';
import { MAX_TIMEOUT_S } from './lifecycle';
import { addInfohashesSchema, ingestBodySchema, listQuerySchema, MAX_LIST_LIMIT, stateChangeSchema } from './requests';
import { MAX_TORRENT_BYTES } from './torrent-file';

/** The downloads API's operations for the OpenAPI document (lib/http/openapi.ts), from its own schemas. */

/** DownloadDto (model.ts): what every downloads route answers. */
export const downloadSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'state', 'name', 'infohashes', 'created_at', 'updated_at'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: '^[0-9a-hjkmnp-tv-z]{26}$', description: 'a ULID, lowercase' },
    state: { type: 'string', enum: [...DOWNLOAD_STATES] },
    name: { type: 'string' },
    infohashes: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['infohash', 'kind'],
        additionalProperties: false,
        properties: {
          infohash: { type: 'string', pattern: '^([0-9a-f]{40}|[0-9a-f]{64})$' },
          kind: { type: 'string', enum: ['v1', 'v2'] },
        },
      },
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    merged_into: { type: 'string' },
    progress: { type: 'number', minimum: 0, maximum: 1 },
    review_reason: { type: 'string', enum: [...REVIEW_REASONS] },
    progress_at: { type: 'string', format: 'date-time', description: 'when it last made progress (lifecycle.ts)' },
    warning: {
      type: 'object',
      required: ['reason', 'since'],
      additionalProperties: false,
      description: 'it will fail with this reason after the grace period unless it moves or keep-waiting is pressed',
      properties: {
        reason: { type: 'string', enum: [...FAILURE_REASONS] },
        since: { type: 'string', format: 'date-time' },
      },
    },
    failure_reason: { type: 'string', enum: [...FAILURE_REASONS] },
    metadata_timeout_s: { type: 'integer', minimum: 0, maximum: MAX_TIMEOUT_S },
    stall_timeout_s: { type: 'integer', minimum: 0, maximum: MAX_TIMEOUT_S },
    category: {
      type: 'string',
      description: 'its sub-category in the torrent client (absent: the default category, TORRENT_CLIENT_CATEGORY)',
    },
    hold: {
      type: 'object',
      required: ['reason', 'since', 'needed_bytes', 'free_bytes'],
      additionalProperties: false,
      description: 'paused by the disk guard (disk-guard.ts): started again when it fits beside DOWNLOAD_DISK_RESERVE',
      properties: {
        reason: { type: 'string', enum: [...HOLD_REASONS] },
        since: { type: 'string', format: 'date-time' },
        needed_bytes: { type: 'integer', minimum: 0 },
        free_bytes: { type: 'integer', minimum: 0 },
      },
    },
    share: {
      type: 'object',
      required: ['action'],
      additionalProperties: false,
      description:
        'the seeding goal (share-goals.ts): met when either figure is reached, then the action; removed_at once the torrent left the client',
      properties: {
        ratio: { type: 'number', minimum: 0, maximum: MAX_SHARE_RATIO },
        time_s: { type: 'integer', minimum: 1, maximum: MAX_SHARE_TIME_S },
        action: { type: 'string', enum: [...SHARE_ACTIONS] },
        seeding_since: { type: 'string', format: 'date-time' },
        met_at: { type: 'string', format: 'date-time' },
        removed_at: { type: 'string', format: 'date-time' },
        removed_files: { type: 'boolean' },
      },
    },
    transfer: {
      type: 'object',
      required: ['at'],
      additionalProperties: false,
      description:
        "the client's figures as the poll last wrote them (transfer.ts): bytes, bytes/s, seconds; each absent when unknown",
      properties: {
        size_bytes: { type: 'integer', minimum: 0 },
        downloaded_bytes: { type: 'integer', minimum: 0 },
        dl_speed: { type: 'integer', minimum: 0 },
        up_speed: { type: 'integer', minimum: 0 },
        eta_s: { type: 'integer', minimum: 0 },
        seeds: { type: 'integer', minimum: 0 },
        peers: { type: 'integer', minimum: 0 },
        ratio: { type: 'number', minimum: 0, maximum: 9999 },
        at: { type: 'string', format: 'date-time' },
      },
    },
  },
};

const owned = (description: string) => ({
  description,
  json: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: { code: { type: 'string' }, message: { type: 'string' }, owner_id: { type: 'string' } },
      },
    },
  },
});
const notFound = {
  description: 'no such download (a malformed id too)',
  json: errorSchema,
};
const json = (schema: JsonSchema) => ({ required: true, content: { 'application/json': { schema } } });

export const downloadsOperations: Operations = {
  'POST /downloads': {
    tag: 'downloads',
    summary: 'Add a download: a magnet, infohashes, or a .torrent file',
    description: `At most one active download per infohash: 201 a new one, 200 the existing active download holding any of the hashes (hashes it lacked are appended). A .torrent (at most ${MAX_TORRENT_BYTES} bytes) comes as multipart/form-data (the file in the part \`torrent\`, an optional \`name\`, the timeouts and the seeding goal as text fields) or base64 in JSON (\`torrent_base64\`); a file refused is 400 INVALID_TORRENT. \`category\` puts it in a sub-category of the default one (\`<TORRENT_CLIENT_CATEGORY>/<name>\`, created in the client when it has none, with \`category_save_path\`, a folder relative to the client's default save path): 400 INVALID_CATEGORY, 409 CATEGORY_CONFLICT when it exists with another save path. Optional \`Idempotency-Key\` header.`,
    parameters: [{ name: 'Idempotency-Key', in: 'header', schema: { type: 'string', minLength: 1, maxLength: 255 } }],
    requestBody: {
      required: true,
      content: {
        'application/json': { schema: ingestBodySchema },
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['torrent'],
            additionalProperties: false,
            properties: {
              torrent: {
                type: 'string',
                contentMediaType: 'application/x-bittorrent',
                description: 'the .torrent file',
              },
              name: { type: 'string', maxLength: 1024 },
              category: { type: 'string', maxLength: MAX_CATEGORY_LENGTH },
              category_save_path: { type: 'string', maxLength: MAX_SAVE_PATH_LENGTH },
              // Form fields are text: the same values as the JSON body's numbers, written in digits.
              metadata_timeout_s: {
                type: 'string',
                pattern: '^\\s*\\d{1,9}\\s*$',
                description: 'whole seconds, 0 = never',
              },
              stall_timeout_s: {
                type: 'string',
                pattern: '^\\s*\\d{1,9}\\s*$',
                description: 'whole seconds, 0 = never',
              },
              share_ratio: { type: 'string', pattern: '^\\s*\\d{1,4}(\\.\\d{1,6})?\\s*$' },
              share_time_s: { type: 'string', pattern: '^\\s*\\d{1,9}\\s*$' },
              share_action: { type: 'string', enum: [...SHARE_ACTIONS] },
            },
          },
        },
      },
    },
    responses: {
      '201': { description: 'created', json: downloadSchema },
      '200': { description: 'the existing active download', json: downloadSchema },
      '409': { description: 'IDEMPOTENCY_IN_PROGRESS, CATEGORY_CONFLICT', json: errorSchema },
      '422': { description: 'IDEMPOTENCY_KEY_REUSED', json: errorSchema },
    },
  },
  'GET /downloads': {
    tag: 'downloads',
    summary: 'Downloads, newest first',
    parameters: Object.entries(listQuerySchema.properties).map(([name, schema]) => ({
      name,
      in: 'query' as const,
      schema,
    })),
    description: `\`q\`: an infohash prefix (4+ hex) or a name fragment; \`limit\` 1..${MAX_LIST_LIMIT} (20); \`cursor\` from the previous page.`,
    responses: {
      '200': {
        description: 'a page',
        json: {
          type: 'object',
          required: ['items'],
          additionalProperties: false,
          properties: { items: { type: 'array', items: downloadSchema }, cursor: { type: 'string' } },
        },
      },
    },
  },
  'GET /downloads/{id}': {
    tag: 'downloads',
    summary: 'One download',
    responses: { '200': { description: 'the download', json: downloadSchema }, '404': notFound },
  },
  'POST /downloads/{id}/retry': {
    tag: 'downloads',
    summary: 'A failed, cancelled or stuck download back to queued and into the client',
    responses: {
      '200': { description: 'queued again', json: downloadSchema },
      '404': notFound,
      '409': owned('ACTIVE_EXISTS (owner_id: the active download) or INVALID_TRANSITION'),
      '502': {
        description: 'the torrent client refused (state rolled back)',
        json: errorSchema,
      },
    },
  },
  'POST /downloads/{id}/keep-waiting': {
    tag: 'downloads',
    summary: 'Restart the timeout clock of a download that was warned (idempotent)',
    responses: {
      '200': { description: 'the clock restarted, the warning cleared', json: downloadSchema },
      '404': notFound,
      '409': owned('INVALID_TRANSITION: the download has finished'),
    },
  },
  'POST /downloads/{id}/state': {
    tag: 'downloads',
    summary: 'Change the state (compare-and-set from the current one)',
    requestBody: json(stateChangeSchema),
    responses: {
      '200': { description: 'changed', json: downloadSchema },
      '404': notFound,
      '409': owned('INVALID_TRANSITION (finished → active: use retry)'),
    },
  },
  'POST /downloads/{id}/infohashes': {
    tag: 'downloads',
    summary: 'Append infohashes',
    requestBody: json(addInfohashesSchema),
    responses: {
      '200': { description: 'appended', json: downloadSchema },
      '404': notFound,
      '409': owned('INFOHASH_TAKEN (owner_id: the active download holding it)'),
    },
  },
};

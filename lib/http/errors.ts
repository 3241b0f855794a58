import { InvalidIdError } from '../ident';
import { TransactionConflictError } from '../aws/transact';
import { isStorageUnavailable } from '../aws/unavailable';
import {
  ActiveExistsError,
  DownloadNotFoundError,
  InfohashTakenError,
  InvalidTransitionError,
  TooManyInfohashesError,
} from '../downloads/errors';
import { InvalidInfohashError } from '../downloads/infohash';
import { InvalidMagnetError } from '../downloads/magnet';
import { TorrentClientError } from '../torrents/client';
import { InvalidCursorError } from '../downloads/service';
import { InvalidFileNameError } from '../names';
import { IdempotencyInProgressError, IdempotencyKeyInvalidError, IdempotencyKeyReusedError } from '../idempotency/errors';

/**
 * The ONE mapping from errors to HTTP answers `{error: {code, message, ...}}`.
 * Anything not listed is a 500 whose message reveals nothing internal.
 */

export const ErrorCode = {
  INVALID_REQUEST: 'INVALID_REQUEST',
  INVALID_MAGNET: 'INVALID_MAGNET',
  INVALID_INFOHASH: 'INVALID_INFOHASH',
  INVALID_NAME: 'INVALID_NAME',
  TOO_MANY_INFOHASHES: 'TOO_MANY_INFOHASHES',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  NOT_FOUND: 'NOT_FOUND',
  INFOHASH_TAKEN: 'INFOHASH_TAKEN',
  ACTIVE_EXISTS: 'ACTIVE_EXISTS',
  INVALID_TRANSITION: 'INVALID_TRANSITION',
  TORRENT_CLIENT_ERROR: 'TORRENT_CLIENT_ERROR',
  BUSY: 'BUSY',
  UNAUTHORIZED: 'UNAUTHORIZED',
  IDEMPOTENCY_KEY_INVALID: 'IDEMPOTENCY_KEY_INVALID',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  IDEMPOTENCY_IN_PROGRESS: 'IDEMPOTENCY_IN_PROGRESS',
  UNAVAILABLE: 'UNAVAILABLE',
  INTERNAL: 'INTERNAL',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** A refusal decided at the HTTP edge (bad body, size, media type...). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface HttpErrorBody {
  status: number;
  headers?: Record<string, string>;
  body: { error: { code: ErrorCode; message: string } & Record<string, unknown> };
}

export const RETRY_AFTER_S = 5;

export function toHttpError(err: unknown): HttpErrorBody {
  const answer = (status: number, code: ErrorCode, message: string, details: Record<string, unknown> = {}): HttpErrorBody => ({
    status,
    body: { error: { code, message, ...details } },
  });
  if (err instanceof HttpError) return answer(err.status, err.code, err.message, err.details);
  if (err instanceof InvalidIdError) return answer(404, ErrorCode.NOT_FOUND, 'not found');
  if (err instanceof DownloadNotFoundError) return answer(404, ErrorCode.NOT_FOUND, err.message);
  if (err instanceof InvalidMagnetError) return answer(400, ErrorCode.INVALID_MAGNET, err.message);
  if (err instanceof InvalidInfohashError) return answer(400, ErrorCode.INVALID_INFOHASH, err.message);
  if (err instanceof InvalidFileNameError) return answer(400, ErrorCode.INVALID_NAME, err.message);
  if (err instanceof InvalidCursorError) return answer(400, ErrorCode.INVALID_REQUEST, err.message);
  if (err instanceof TooManyInfohashesError) return answer(400, ErrorCode.TOO_MANY_INFOHASHES, err.message);
  if (err instanceof InfohashTakenError) return answer(409, ErrorCode.INFOHASH_TAKEN, err.message, { owner_id: err.ownerId, infohash: err.infohash });
  if (err instanceof ActiveExistsError) return answer(409, ErrorCode.ACTIVE_EXISTS, err.message, { owner_id: err.ownerId, infohash: err.infohash });
  if (err instanceof InvalidTransitionError) return answer(409, ErrorCode.INVALID_TRANSITION, err.message, { state: err.current });
  if (err instanceof IdempotencyKeyInvalidError) return answer(400, ErrorCode.IDEMPOTENCY_KEY_INVALID, err.message);
  if (err instanceof IdempotencyKeyReusedError) return answer(422, ErrorCode.IDEMPOTENCY_KEY_REUSED, err.message);
  if (err instanceof IdempotencyInProgressError) return { ...answer(409, ErrorCode.IDEMPOTENCY_IN_PROGRESS, err.message), headers: { 'retry-after': '1' } };
  if (err instanceof TorrentClientError) return answer(502, ErrorCode.TORRENT_CLIENT_ERROR, err.message);
  if (err instanceof TransactionConflictError) return answer(503, ErrorCode.BUSY, 'too many concurrent changes, retry');
  // Storage down, hung (the SDK's bounded timeout) or throttling: the caller may retry; a write may have landed,
  // so a retried POST /downloads should carry its Idempotency-Key.
  if (isStorageUnavailable(err)) return { ...answer(503, ErrorCode.UNAVAILABLE, 'storage unavailable, retry later'), headers: { 'retry-after': String(RETRY_AFTER_S) } };
  return answer(500, ErrorCode.INTERNAL, 'internal error');
}

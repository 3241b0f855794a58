import { isDomainError } from '../errors';
import { isStorageUnavailable } from '../aws/unavailable';

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
  NOT_A_CANDIDATE: 'NOT_A_CANDIDATE',
  FORBIDDEN: 'FORBIDDEN',
  TORRENT_CLIENT_ERROR: 'TORRENT_CLIENT_ERROR',
  BUSY: 'BUSY',
  UNAUTHORIZED: 'UNAUTHORIZED',
  NOT_CONFIGURED: 'NOT_CONFIGURED',
  IDEMPOTENCY_KEY_INVALID: 'IDEMPOTENCY_KEY_INVALID',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  IDEMPOTENCY_IN_PROGRESS: 'IDEMPOTENCY_IN_PROGRESS',
  UNAVAILABLE: 'UNAVAILABLE',
  /** The console's retry of a failed Telegram delivery: at most once. */
  ALREADY_RETRIED: 'ALREADY_RETRIED',
  TELEGRAM_REFUSED: 'TELEGRAM_REFUSED',
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
  const answer = (
    status: number,
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
  ): HttpErrorBody => ({
    status,
    body: { error: { code, message, ...details } },
  });
  if (err instanceof HttpError) return answer(err.status, err.code, err.message, err.details);
  if (isDomainError(err)) {
    const refused = answer(err.status, err.code as ErrorCode, err.publicMessage, err.details);
    const retryAfter = err.retryAfterS;
    return retryAfter === undefined ? refused : { ...refused, headers: { 'retry-after': String(retryAfter) } };
  }
  // Storage down, hung (the SDK's bounded timeout) or throttling: the caller may retry; a write may have landed,
  // so a retried POST /downloads should carry its Idempotency-Key.
  if (isStorageUnavailable(err))
    return {
      ...answer(503, ErrorCode.UNAVAILABLE, 'storage unavailable, retry later'),
      headers: { 'retry-after': String(RETRY_AFTER_S) },
    };
  return answer(500, ErrorCode.INTERNAL, 'internal error');
}

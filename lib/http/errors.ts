import { isDomainError } from '../errors';
import { TorrentClientError } from '../torrents/client';

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
  body: { error: { code: ErrorCode; message: string } & Record<string, unknown> };
}

export function toHttpError(err: unknown): HttpErrorBody {
  const answer = (status: number, code: ErrorCode, message: string, details: Record<string, unknown> = {}): HttpErrorBody => ({
    status,
    body: { error: { code, message, ...details } },
  });
  if (err instanceof HttpError) return answer(err.status, err.code, err.message, err.details);
  if (isDomainError(err)) return answer(err.status, err.code as ErrorCode, err.publicMessage, err.details);
  if (err instanceof TorrentClientError) return answer(502, ErrorCode.TORRENT_CLIENT_ERROR, err.message);
  return answer(500, ErrorCode.INTERNAL, 'internal error');
}

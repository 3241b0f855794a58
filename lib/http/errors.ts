import { ErrorCode, isDomainError } from '../errors';
import { isStorageUnavailable } from '../aws/unavailable';

/**
 * The ONE mapping from errors to HTTP answers `{error: {code, message, ...}}`.
 * Anything not listed is a 500 whose message reveals nothing internal.
 */

export { ErrorCode } from '../errors';

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
    const refused = answer(err.status, err.code, err.publicMessage, err.details);
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

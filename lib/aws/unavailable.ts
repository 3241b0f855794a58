/**
 * Is this error "the storage is not answering" (down, hung past the SDK's
 * bounded timeout, throttling, a 5xx of the service) rather than a refusal of
 * the request? Only such errors become 503 + Retry-After at the HTTP edge.
 * The SDK's own classifier is internal to @smithy; these are its lists.
 */

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const NAMES = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
]);

export function isStorageUnavailable(err: unknown): boolean {
  let e = err as
    { name?: unknown; code?: unknown; $metadata?: { httpStatusCode?: number }; cause?: unknown } | undefined;
  for (let depth = 0; e && typeof e === 'object' && depth < 5; depth++, e = e.cause as typeof e) {
    if (typeof e.name === 'string' && NAMES.has(e.name)) return true;
    if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return true;
    const status = e.$metadata?.httpStatusCode;
    if (status !== undefined && status >= 500) return true;
  }
  return false;
}

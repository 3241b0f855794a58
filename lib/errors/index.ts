/**
 * The one base of every typed refusal. A domain error carries its `code`
 * (what callers and clients branch on), the HTTP status it maps to, and
 * details safe to show (an owner's id, a limit). `lib/http/errors.ts` maps by
 * these fields, so the HTTP edge never imports a domain.
 */
/**
 * Every code a caller can receive: the HTTP edge's `{error:{code}}`, the same
 * code in NATS envelopes and step rows. A domain error's code is one of these
 * by its type, so the edge maps it without a cast.
 */
export const ErrorCode = {
  INVALID_REQUEST: 'INVALID_REQUEST',
  INVALID_MAGNET: 'INVALID_MAGNET',
  /** A .torrent file refused (lib/downloads/torrent-file.ts). */
  INVALID_TORRENT: 'INVALID_TORRENT',
  INVALID_INFOHASH: 'INVALID_INFOHASH',
  INVALID_NAME: 'INVALID_NAME',
  /** A category or a new category's save path refused (lib/downloads/category.ts). */
  INVALID_CATEGORY: 'INVALID_CATEGORY',
  /** The category exists with another save path, or differs from one only in letter case. */
  CATEGORY_CONFLICT: 'CATEGORY_CONFLICT',
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
  INVALID_OBJECT_KEY: 'INVALID_OBJECT_KEY',
  TORRENT_CLIENT_AUTH: 'TORRENT_CLIENT_AUTH',
  /** The login gate is closed after refused logins (qBittorrent bans after 5). */
  TORRENT_CLIENT_LOGIN_DEFERRED: 'TORRENT_CLIENT_LOGIN_DEFERRED',
  TORRENT_CLIENT_VERSION: 'TORRENT_CLIENT_VERSION',
  TORRENT_ADD_REFUSED: 'TORRENT_ADD_REFUSED',
  TORRENT_CLIENT_ANSWER: 'TORRENT_CLIENT_ANSWER',
  IDEMPOTENCY_KEY_INVALID: 'IDEMPOTENCY_KEY_INVALID',
  IDEMPOTENCY_KEY_REUSED: 'IDEMPOTENCY_KEY_REUSED',
  IDEMPOTENCY_IN_PROGRESS: 'IDEMPOTENCY_IN_PROGRESS',
  UNAVAILABLE: 'UNAVAILABLE',
  /** The console's retry of a failed Telegram delivery: at most once. */
  ALREADY_RETRIED: 'ALREADY_RETRIED',
  TELEGRAM_REFUSED: 'TELEGRAM_REFUSED',
  /** A user holds at most MAX_FEED_TOKENS calendar feed tokens (lib/sync/feed-tokens.ts). */
  TOO_MANY_FEED_TOKENS: 'TOO_MANY_FEED_TOKENS',
  INTERNAL: 'INTERNAL',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export abstract class DomainError extends Error {
  abstract readonly code: ErrorCode;
  abstract readonly status: number;
  readonly #details: Record<string, unknown>;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    // Logs and callers see the class name. Every bundle keeps names (esbuild keepNames), so a
    // class renamed to dodge a collision inside one bundle still reports the name it was written with.
    this.name = new.target.name;
    this.#details = details;
  }
  /** Safe to return to the caller; never a secret. */
  get details(): Record<string, unknown> {
    return this.#details;
  }
  /** Seconds the caller should wait before a retry (an HTTP `Retry-After`); none unless a retry can succeed. */
  get retryAfterS(): number | undefined {
    return undefined;
  }
  /** What the caller sees; defaults to the message. 404s say only "not found". */
  get publicMessage(): string {
    return this.message;
  }
}

export function isDomainError(err: unknown): err is DomainError {
  return err instanceof DomainError;
}

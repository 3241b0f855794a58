import { randomBytes } from 'node:crypto';
import { tokenHash } from '../auth/tokens';
import { isoTime } from '../clock';
import { DomainError, ErrorCode } from '../errors';
import { newId } from '../ident';

/**
 * The calendar feed's own tokens (decision 436). A calendar app cannot send a
 * bearer token, so the feed URL carries one: 32 random bytes, good for ONE
 * user's payment calendar and nothing else (no route but the feed reads it),
 * stored only as its SHA-256 (as the API tokens: lib/auth/tokens.ts), shown
 * once at creation, listed by id and revoked by id through the API. A revoked
 * token's lookup item is deleted in the revoking transaction and the feed
 * reads it consistently, so the next request is refused.
 */

export const FEED_TOKEN_PREFIX = 'tsf_';
const FEED_TOKEN = /^tsf_[A-Za-z0-9_-]{43}$/;
/** Tokens one user may hold at once: a phone, a laptop, a partner's calendar. */
export const MAX_FEED_TOKENS = 10;

export const newFeedToken = () => FEED_TOKEN_PREFIX + randomBytes(32).toString('base64url');
/** A string shaped like our feed token (anything else is refused before any storage call). */
export const isFeedToken = (value: unknown): value is string => typeof value === 'string' && FEED_TOKEN.test(value);

export interface FeedTokenRecord {
  token_id: string;
  user_id: string;
  created_at: string;
}

export interface FeedTokenStore {
  /** Adds the token unless the user holds `max` already (false then); one transaction with the count. */
  create(record: FeedTokenRecord, sha256: string, max: number): Promise<boolean>;
  list(user: string): Promise<FeedTokenRecord[]>;
  /** Deletes the token's listing and lookup together; false when the user has no such token. */
  revoke(user: string, tokenId: string): Promise<boolean>;
  /** The token a hash stands for, read consistently (a revoked one is gone). */
  byHash(sha256: string): Promise<FeedTokenRecord | undefined>;
  /** Whether the user has a brokerage connection: no feed of a calendar that is not synced. */
  hasConnection(user: string): Promise<boolean>;
}

export class FeedTokenLimitError extends DomainError {
  readonly code = ErrorCode.TOO_MANY_FEED_TOKENS;
  readonly status = 409;
  constructor(readonly limit: number) {
    super(`a user holds at most ${limit} feed tokens: revoke one first`, { limit });
  }
}

export class FeedTokenService {
  constructor(private readonly store: FeedTokenStore) {}

  /** A new token: the only time it is ever returned. Undefined when the user has no connection. */
  async create(user: string, now: number): Promise<(FeedTokenRecord & { token: string }) | undefined> {
    if (!(await this.store.hasConnection(user))) return undefined;
    const token = newFeedToken();
    const record = { token_id: newId(), user_id: user, created_at: isoTime(now) };
    if (!(await this.store.create(record, tokenHash(token), MAX_FEED_TOKENS)))
      throw new FeedTokenLimitError(MAX_FEED_TOKENS);
    return { ...record, token };
  }

  list(user: string): Promise<FeedTokenRecord[]> {
    return this.store.list(user);
  }

  revoke(user: string, tokenId: string): Promise<boolean> {
    return this.store.revoke(user, tokenId);
  }

  /** The user whose calendar `token` opens, only when it is `user` (a token never opens another user's feed). */
  async opens(token: unknown, user: string): Promise<boolean> {
    if (!isFeedToken(token)) return false;
    const found = await this.store.byHash(tokenHash(token));
    return found?.user_id === user && (await this.store.hasConnection(user));
  }
}

/**
 * Typed failures of the T-Bank Invest API. The kind decides what the caller
 * does; `trackingId` is the answer's x-tracking-id (support asks for it).
 *
 * kind            from                                     the step
 * unauthenticated 40003 (HTTP 401)                         ends the section, no retry: TOKEN_INVALID
 * forbidden       40002 (HTTP 403)                         ends the section, no retry: INSUFFICIENT_RIGHTS
 * not-found       50004 account / 50002 instrument (HTTP 404) skips that account or instrument
 * rate-limited    80002 / HTTP 429                         waits for x-ratelimit-reset, retries; then RATE_LIMITED
 * retired         12002 the method is retired (HTTP 503)   ends the section, no retry: METHOD_RETIRED
 * transient       70001/70002/70003, other 5xx, network    bounded retries with backoff; then UPSTREAM_ERROR
 * no-data         30238 no data for the specified period   a period query reads it as empty
 * bad-request     30xxx and any other 4xx                  ends the section: UPSTREAM_REJECTED
 * bad-answer      not JSON, truncated, unknown enum, money out of range: BAD_UPSTREAM_ANSWER
 */
export type TBankErrorKind =
  | 'unauthenticated'
  | 'forbidden'
  | 'not-found'
  | 'rate-limited'
  | 'retired'
  | 'transient'
  | 'no-data'
  | 'bad-request'
  | 'bad-answer';

export type RateScope = 'token' | 'address';

export class TBankError extends Error {
  readonly code: string;
  constructor(
    readonly kind: TBankErrorKind,
    message: string,
    readonly detail: {
      method?: string;
      status?: number;
      apiCode?: string;
      trackingId?: string;
      resetSeconds?: number;
      /**
       * Whose limit a 429 was: `token` when the answer carries the token's own counter
       * (x-ratelimit-limit) spent (x-ratelimit-remaining 0), else `address`: the token had calls
       * left, so it was refused for the address it came from.
       */
      rateScope?: RateScope;
    } = {},
  ) {
    super(message);
    this.name = 'TBankError';
    this.code = STEP_CODE[kind];
  }
  get trackingId() {
    return this.detail.trackingId;
  }
}

/** No send instant of the budget's is left before the step's bound (RATE_LIMITED; a continuing section hands over instead). */
export class PastBoundError extends TBankError {
  /** `detail`: the answer that made the call wait (a 429's tracking id), when a retry is what ran past the bound. */
  constructor(message: string, detail: TBankError['detail'] = {}) {
    super('rate-limited', message, detail);
  }
}

export const STEP_CODE: Record<TBankErrorKind, string> = {
  unauthenticated: 'TOKEN_INVALID',
  forbidden: 'INSUFFICIENT_RIGHTS',
  'not-found': 'ACCOUNT_NOT_FOUND',
  'rate-limited': 'RATE_LIMITED',
  retired: 'METHOD_RETIRED',
  transient: 'UPSTREAM_ERROR',
  'no-data': 'UPSTREAM_REJECTED',
  'bad-request': 'UPSTREAM_REJECTED',
  'bad-answer': 'BAD_UPSTREAM_ANSWER',
};

/** The kind of an error answer: the body's 5-digit API code (client.ts `errorBody`) first, the HTTP status second. */
export function classify(status: number, apiCode: string | undefined): TBankErrorKind {
  switch (apiCode) {
    case '40003':
      return 'unauthenticated';
    case '40002':
      return 'forbidden';
    case '50002': // instrument not found
    case '50004':
      return 'not-found';
    case '80002':
      return 'rate-limited';
    case '12002': // a retired method: retrying cannot help, and 503 alone would read as transient
      return 'retired';
    case '30238':
      return 'no-data';
    case '70001':
    case '70002':
    case '70003':
      return 'transient';
  }
  if (status === 429) return 'rate-limited';
  if (status === 401) return 'unauthenticated';
  if (status === 403) return 'forbidden';
  if (status >= 500) return 'transient';
  return 'bad-request';
}

/** A field of an answer broke the contract (unknown enum, money out of range, missing id). */
export class ContractError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContractError';
  }
}

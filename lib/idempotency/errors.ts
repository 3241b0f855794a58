/** Typed refusals of the idempotency layer; lib/http/errors maps them to HTTP answers. */

export class IdempotencyKeyInvalidError extends Error {
  readonly code = 'IDEMPOTENCY_KEY_INVALID';
  constructor(reason: string) {
    super(`invalid Idempotency-Key: ${reason}`);
    this.name = 'IdempotencyKeyInvalidError';
  }
}

/** The key was used before with another payload: refused, never replayed (a client bug). */
export class IdempotencyKeyReusedError extends Error {
  readonly code = 'IDEMPOTENCY_KEY_REUSED';
  constructor() {
    super('this Idempotency-Key was already used with a different request body');
    this.name = 'IdempotencyKeyReusedError';
  }
}

/** The first request with this key is still running: retry later, it will then be replayed. */
export class IdempotencyInProgressError extends Error {
  readonly code = 'IDEMPOTENCY_IN_PROGRESS';
  constructor() {
    super('a request with this Idempotency-Key is still in progress');
    this.name = 'IdempotencyInProgressError';
  }
}

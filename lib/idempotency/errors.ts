import { DomainError } from '../errors';

/** Typed refusals of the idempotency layer; lib/http/errors maps them by their status and code. */

export class IdempotencyKeyInvalidError extends DomainError {
  readonly code = 'IDEMPOTENCY_KEY_INVALID';
  readonly status = 400;
  constructor(reason: string) {
    super(`invalid Idempotency-Key: ${reason}`);
  }
}

/** The key was used before with another payload: refused, never replayed (a client bug). */
export class IdempotencyKeyReusedError extends DomainError {
  readonly code = 'IDEMPOTENCY_KEY_REUSED';
  readonly status = 422;
  constructor() {
    super('this Idempotency-Key was already used with a different request body');
  }
}

/** The first request with this key is still running: retry later, it will then be replayed. */
export class IdempotencyInProgressError extends DomainError {
  readonly code = 'IDEMPOTENCY_IN_PROGRESS';
  readonly status = 409;
  override get retryAfterS(): number {
    return 1;
  }
  constructor() {
    super('a request with this Idempotency-Key is still in progress');
  }
}

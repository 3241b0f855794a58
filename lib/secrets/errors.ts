import { DomainError } from '../errors';

/** The typed failures of this module; callers branch on the class. */

/** This sealed value does not open: tampered, bound to another context, an unknown form, or its key is gone. */
export class SecretUnreadableError extends Error {
  readonly code = 'SECRET_UNREADABLE';
  constructor(reason: string) {
    super(`sealed secret cannot be opened: ${reason}`);
    this.name = 'SecretUnreadableError';
  }
}

/**
 * KMS refused to use the key (disabled, pending deletion, not found, not
 * allowed to this role): no value under it opens or seals until an operator
 * acts. Not the caller's doing, so the HTTP edge answers 500 and the log says why.
 */
export class SecretKeyRefusedError extends Error {
  readonly code = 'SECRET_KEY_REFUSED';
  constructor(
    readonly operation: string,
    readonly keyId: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`KMS refused ${operation} with key ${keyId}: ${reason}`, options);
    this.name = 'SecretKeyRefusedError';
  }
}

/** KMS did not answer (throttled, a 5xx, the network, a timeout): the same call may succeed shortly. */
export class SecretsUnavailableError extends DomainError {
  readonly code = 'UNAVAILABLE';
  readonly status = 503;
  constructor(operation: string, reason: string, options?: { cause?: unknown }) {
    super(`KMS ${operation} did not answer: ${reason}`);
    if (options?.cause !== undefined) this.cause = options.cause;
  }
  override get retryAfterS(): number {
    return 5;
  }
  override get publicMessage(): string {
    return 'secret store unavailable, retry later';
  }
}

/**
 * A secret named in the function's configuration could not be read at run time (lib/secrets/runtime.ts):
 * named by its id, never its value. An operator's to fix (access, a missing or malformed secret), so a 500.
 */
export class SecretReadError extends Error {
  readonly code = 'SECRET_READ_FAILED';
  constructor(
    readonly secretId: string,
    reason: string,
  ) {
    super(`secret ${JSON.stringify(secretId)} cannot be read: ${reason}`);
    this.name = 'SecretReadError';
  }
}

/** Typed errors of the sync domain (the client's own are in tbank/errors.ts). */

export class StaleAttemptError extends Error {
  readonly code = 'STALE_ATTEMPT';
  constructor(readonly attemptId: string) {
    super(`attempt ${attemptId} is no longer the user's current attempt`);
    this.name = 'StaleAttemptError';
  }
}

/** The connection has no token: no section can run. */
export class NoTokenError extends Error {
  readonly code = 'ACCESS_DENIED';
  constructor() {
    super('no connection token');
    this.name = 'NoTokenError';
  }
}

/** An upstream id that cannot be part of a key (it would reach another prefix). */
export class UnsafeKeyPartError extends Error {
  readonly code = 'UNSAFE_KEY_PART';
  constructor(what: string, value: string) {
    super(`${what} ${JSON.stringify(value.slice(0, 80))} cannot be part of a key`);
    this.name = 'UnsafeKeyPartError';
  }
}

export class MoneyError extends Error {
  readonly code = 'BAD_MONEY';
  constructor(message: string) {
    super(message);
    this.name = 'MoneyError';
  }
}

/** The reseal's input (the operator's event or flags) is not `{cursor?, limit?, all?}`. */
export class ResealInputError extends Error {
  readonly code = 'RESEAL_INPUT_INVALID';
  constructor(problem: string) {
    super(`reseal input: ${problem}`);
    this.name = 'ResealInputError';
  }
}

/** The typed failures of this module; callers branch on the class. */

export class SecretUnreadableError extends Error {
  readonly code = 'SECRET_UNREADABLE';
  constructor(reason: string) {
    super(`sealed secret cannot be opened: ${reason}`);
    this.name = 'SecretUnreadableError';
  }
}

/** A secret named in the function's configuration could not be read at run time (never its value). */
export class SecretsUnavailableError extends Error {
  readonly code = 'SECRETS_UNAVAILABLE';
  constructor(
    readonly secretId: string,
    reason: string,
  ) {
    super(`secret ${JSON.stringify(secretId)} cannot be read: ${reason}`);
    this.name = 'SecretsUnavailableError';
  }
}

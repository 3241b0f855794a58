/** The typed failures of this module; callers branch on the class. */

export class SecretUnreadableError extends Error {
  readonly code = 'SECRET_UNREADABLE';
  constructor(reason: string) {
    super(`sealed secret cannot be opened: ${reason}`);
    this.name = 'SecretUnreadableError';
  }
}

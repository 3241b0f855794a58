/** The typed failures of this module; callers branch on the class. */

/** Thrown by the authorizer for a 401: API Gateway (and serverless offline) turns the message `Unauthorized` into one. */
export class UnauthorizedError extends Error {
  constructor() {
    super('Unauthorized');
    this.name = 'UnauthorizedError';
  }
}

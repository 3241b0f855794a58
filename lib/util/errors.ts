/** Typed failures of the shared utilities; callers branch on the class, logs carry its name. */

export class TimeoutError extends Error {
  constructor(
    readonly ms: number,
    what: string,
  ) {
    super(`${what} did not finish within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/** A stored item lacks a field its reader needs, or holds one of another kind: never read as the type it claims. */
export class MalformedItemError extends Error {
  constructor(
    readonly what: string,
    readonly field: string,
    expected: string,
  ) {
    super(`${what} item: field ${field} is not ${expected}`);
    this.name = 'MalformedItemError';
  }
}

import { DomainError } from '../errors';

/** The typed failures of this module; callers branch on the class. */

export class UnprocessedItemsError extends Error {
  constructor(
    readonly remaining: number,
    operation = 'BatchWriteItem',
  ) {
    super(`${operation} kept returning ${remaining} unprocessed items`);
    this.name = 'UnprocessedItemsError';
  }
}

export interface CancelReason {
  code: string;
  item?: Record<string, unknown>;
}

export class TransactionCancelledError extends Error {
  constructor(readonly reasons: CancelReason[]) {
    super(`transaction cancelled: ${reasons.map((r) => r.code).join(', ')}`);
    this.name = 'TransactionCancelledError';
  }

  /** Index of the transaction items whose condition failed. */
  failedConditions(): number[] {
    return this.reasons.flatMap((r, i) => (r.code === 'ConditionalCheckFailed' ? [i] : []));
  }
}

export class TransactionConflictError extends DomainError {
  readonly code = 'BUSY';
  readonly status = 503;
  override get publicMessage(): string {
    return 'too many concurrent changes, retry';
  }
  constructor(attempts: number) {
    super(`transaction still conflicting after ${attempts} attempts`);
  }
}

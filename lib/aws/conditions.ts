import { TransactionConflictError } from './errors';
import { TransactionCancelledError } from './errors';

/**
 * The shared shapes of conditional writes: compare-and-swap on an item's
 * `revision`, and "the condition failed" recognised in one place whether it
 * came from a single write or from item `index` of a transaction.
 */

/** Condition and values of a write that succeeds only if nobody wrote since `revision` was read. */
export function revisionIs(revision: number): { condition: string; values: Record<string, unknown> } {
  return { condition: 'revision = :rev', values: { ':rev': revision } };
}

/** True when a single conditional write, or item `index` of a transaction, failed its condition. */
export function conditionFailed(err: unknown, index = 0): boolean {
  if (err instanceof TransactionCancelledError) return err.reasons[index]?.code === 'ConditionalCheckFailed';
  return (err as { name?: string } | undefined)?.name === 'ConditionalCheckFailedException';
}

/** Runs `write`; a failed condition becomes the typed refusal `refuse()` makes, anything else is rethrown. */
export async function orRefuse<T>(write: () => Promise<T>, refuse: (err: unknown) => Error | undefined): Promise<T> {
  try {
    return await write();
  } catch (err) {
    throw refuse(err) ?? err;
  }
}

/**
 * Read-modify-CAS: `attempt` writes conditioned on the revision it read; when
 * another writer moved the revision first (its condition at `index` failed),
 * read again and retry, at most `turns` times, then give up typed.
 */
export async function withCas<T>(attempt: () => Promise<T>, turns = 8, index = 0): Promise<T> {
  for (let turn = 1; turn <= turns; turn++) {
    try {
      return await attempt();
    } catch (err) {
      if (!conditionFailed(err, index)) throw err;
    }
  }
  throw new TransactionConflictError(turns);
}

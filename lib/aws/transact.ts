import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * TransactWriteItems with the two things every guarded write needs:
 * - the cancellation reasons as data, with the item that failed its condition
 *   (ReturnValuesOnConditionCheckFailure: ALL_OLD) so the caller learns WHO
 *   holds a guard without a second read;
 * - a bounded retry, with jittered backoff, of transactions cancelled only by
 *   TransactionConflict (another transaction on the same items in flight).
 */

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

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

export class TransactionConflictError extends Error {
  constructor(attempts: number) {
    super(`transaction still conflicting after ${attempts} attempts`);
    this.name = 'TransactionConflictError';
  }
}

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 10, maxDelayMs: 400 };

export async function transactWrite(
  client: DynamoDBDocumentClient,
  items: TransactItem[],
  retry: RetryPolicy = DEFAULT_RETRY,
): Promise<void> {
  const withOldValues = items.map(returnOldOnFailure);
  for (let attempt = 1; ; attempt++) {
    try {
      await client.send(new TransactWriteCommand({ TransactItems: withOldValues, ClientRequestToken }));
      return;
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      const reasons: CancelReason[] = (err.CancellationReasons ?? []).map((r) => ({
        code: r.Code ?? 'None',
        item: r.Item ? unmarshall(r.Item) : undefined,
      }));
      const conflictOnly = reasons.some((r) => r.code === 'TransactionConflict') && !reasons.some((r) => r.code === 'ConditionalCheckFailed');
      if (!conflictOnly) throw new TransactionCancelledError(reasons);
      if (attempt >= retry.attempts) throw new TransactionConflictError(attempt);
      await sleep(backoff(attempt, retry));
    }
  }
}

/** Full jitter: spreads racing writers apart instead of re-colliding them. */
export function backoff(attempt: number, retry: RetryPolicy): number {
  const cap = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(Math.random() * cap);
}

function returnOldOnFailure(item: TransactItem): TransactItem {
  for (const kind of ['Put', 'Update', 'Delete', 'ConditionCheck'] as const) {
    const op = item[kind];
    if (op?.ConditionExpression) return { [kind]: { ...op, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } } as TransactItem;
  }
  return item;
}

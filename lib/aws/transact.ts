import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CancelReason, TransactionCancelledError, TransactionConflictError } from './errors';

/**
 * TransactWriteItems with what every guarded write needs:
 * - the cancellation reasons as data, with the item that failed its condition
 *   (ReturnValuesOnConditionCheckFailure: ALL_OLD) so the caller learns WHO
 *   holds a guard without a second read; when DynamoDB leaves the item out,
 *   one consistent read of that key fills it in;
 * - a bounded retry, with jittered backoff, of transactions cancelled only by
 *   TransactionConflict (another transaction on the same items in flight);
 * - idempotency: a ClientRequestToken derived from the operation, its exact
 *   items and a per-call nonce. When DynamoDB applied the write but the answer was lost (a reset
 *   socket, a timeout), our resend carries the same token and DynamoDB
 *   answers "done" instead of running the write again into its own guards (a
 *   second `attribute_not_exists` on the guard we just wrote would otherwise
 *   make our own create look like someone else's). The SDK's own retry resends
 *   the same command, so the same token, too.
 */

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 8, baseDelayMs: 10, maxDelayMs: 400 };

export interface TransactOptions extends Partial<RetryPolicy> {
  /** Attempts when cancelled only by TransactionConflict (default `attempts`); 1 hands the conflict to the caller. */
  conflictAttempts?: number;
  /** Names the operation (e.g. `create:<download id>`); the token is derived from it AND the items. */
  operation?: string;
}

export async function transactWrite(
  client: DynamoDBDocumentClient,
  items: TransactItem[],
  options: TransactOptions = {},
): Promise<void> {
  const retry: RetryPolicy = { ...DEFAULT_RETRY, ...options };
  const withOldValues = items.map(returnOldOnFailure);
  // One token per call: the same on each of its resends, never shared with another caller.
  const ClientRequestToken = requestToken(options.operation ?? '', withOldValues, randomUUID());
  let conflicts = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      await client.send(new TransactWriteCommand({ TransactItems: withOldValues, ClientRequestToken }));
      return;
    } catch (err) {
      if (isTransientNetworkError(err)) {
        // The write may or may not have been applied: resending the same token is safe either way.
        if (attempt >= retry.attempts) throw err;
        await sleep(backoff(attempt, retry));
        continue;
      }
      if (!(err instanceof TransactionCanceledException)) throw err;
      const reasons: CancelReason[] = await Promise.all(
        (err.CancellationReasons ?? []).map(async (r, i) => ({
          code: r.Code ?? 'None',
          item: r.Item
            ? unmarshall(r.Item)
            : r.Code === 'ConditionalCheckFailed'
              ? await readCurrent(client, withOldValues[i])
              : undefined,
        })),
      );
      const conflictOnly =
        reasons.some((r) => r.code === 'TransactionConflict') &&
        !reasons.some((r) => r.code === 'ConditionalCheckFailed');
      if (!conflictOnly) throw new TransactionCancelledError(reasons);
      conflicts++;
      if (conflicts >= (options.conflictAttempts ?? retry.attempts) || attempt >= retry.attempts)
        throw new TransactionConflictError(conflicts);
      await sleep(backoff(attempt, retry));
    }
  }
}

/**
 * 36 characters (DynamoDB's limit) of a digest of the operation, its items and
 * the call's nonce: equal for every resend within one call, different for any
 * other call. The nonce matters: two callers racing the SAME CAS write (same
 * revision, same content) must not both be told "done" — exactly one wins.
 */
export function requestToken(operation: string, items: TransactItem[], nonce: string): string {
  return createHash('sha256')
    .update(operation)
    .update('\0')
    .update(JSON.stringify(items))
    .update('\0')
    .update(nonce)
    .digest('base64url')
    .slice(0, 36);
}

/** Errors after which the request may have reached DynamoDB: the answer, not the write, was lost. */
export function isTransientNetworkError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: string }).code ?? '';
  return (
    ['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNREFUSED', 'UND_ERR_SOCKET'].includes(code) ||
    ['TimeoutError', 'RequestTimeout', 'RequestTimeoutException'].includes(err.name)
  );
}

/** Full jitter: spreads racing writers apart instead of re-colliding them. */
export function backoff(attempt: number, retry: RetryPolicy): number {
  const cap = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** (attempt - 1));
  return Math.floor(Math.random() * cap);
}

function returnOldOnFailure(item: TransactItem): TransactItem {
  for (const kind of ['Put', 'Update', 'Delete', 'ConditionCheck'] as const) {
    const op = item[kind];
    if (op?.ConditionExpression)
      return { [kind]: { ...op, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' } } as TransactItem;
  }
  return item;
}

/** The item a failed condition was about, read consistently (every table of ours is keyed PK/SK). */
async function readCurrent(
  client: DynamoDBDocumentClient,
  item: TransactItem,
): Promise<Record<string, unknown> | undefined> {
  const target = item.Put ?? item.Update ?? item.Delete ?? item.ConditionCheck;
  if (!target) return undefined;
  const source = ('Item' in target ? target.Item : target.Key) as Record<string, unknown> | undefined;
  if (!source || !('PK' in source)) return undefined;
  const Key = { PK: source.PK, ...('SK' in source ? { SK: source.SK } : {}) };
  const { Item } = await client.send(new GetCommand({ TableName: target.TableName, Key, ConsistentRead: true }));
  return Item;
}

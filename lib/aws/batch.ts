import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoff, type RetryPolicy } from './transact';
import { UnprocessedItemsError } from './errors';

type WriteRequest =
  { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Record<string, unknown> } };

const BATCH_RETRY: RetryPolicy = { attempts: 9, baseDelayMs: 20, maxDelayMs: 2_000 };

/**
 * Writes every request in batches of 25 (DynamoDB's limit), re-sending the
 * unprocessed ones with jittered backoff: throttling is normal under load and
 * must not lose items, but it must not loop forever either.
 */
export async function batchWriteAll(
  client: DynamoDBDocumentClient,
  table: string,
  requests: WriteRequest[],
  retry: RetryPolicy = BATCH_RETRY,
): Promise<void> {
  for (let i = 0; i < requests.length; i += 25) {
    let pending: WriteRequest[] = requests.slice(i, i + 25);
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > retry.attempts) throw new UnprocessedItemsError(pending.length);
      if (attempt > 1) await sleep(backoff(attempt - 1, retry));
      const out = await client.send(new BatchWriteCommand({ RequestItems: { [table]: pending } }));
      pending = (out.UnprocessedItems?.[table] ?? []) as WriteRequest[];
    }
  }
}

export const putRequest = (Item: Record<string, unknown>): WriteRequest => ({ PutRequest: { Item } });
export const deleteRequest = (Key: Record<string, unknown>): WriteRequest => ({ DeleteRequest: { Key } });

/**
 * Reads every key in batches of 100 (DynamoDB's limit), re-asking for the
 * unprocessed ones with the same bounded, jittered backoff as the writes. The
 * items come back in no particular order.
 */
export async function batchGetAll(
  client: DynamoDBDocumentClient,
  table: string,
  keys: Record<string, unknown>[],
  options: { consistentRead?: boolean; retry?: RetryPolicy } = {},
): Promise<Record<string, unknown>[]> {
  const retry = options.retry ?? BATCH_RETRY;
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < keys.length; i += 100) {
    let pending = keys.slice(i, i + 100);
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > retry.attempts) throw new UnprocessedItemsError(pending.length, 'BatchGetItem');
      if (attempt > 1) await sleep(backoff(attempt - 1, retry));
      const out = await client.send(
        new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: options.consistentRead } } }),
      );
      items.push(...(out.Responses?.[table] ?? []));
      pending = out.UnprocessedKeys?.[table]?.Keys ?? [];
    }
  }
  return items;
}

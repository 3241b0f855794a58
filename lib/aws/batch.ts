import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoff, type RetryPolicy } from './transact';

type WriteRequest =
  { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Record<string, unknown> } };

export class UnprocessedItemsError extends Error {
  constructor(readonly remaining: number) {
    super(`BatchWriteItem kept returning ${remaining} unprocessed items`);
    this.name = 'UnprocessedItemsError';
  }
}

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

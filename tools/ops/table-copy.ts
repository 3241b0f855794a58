import {
  AttributeValue,
  BatchGetItemCommand,
  BatchWriteItemCommand,
  DynamoDBClient,
  ScanCommand,
  WriteRequest,
} from '@aws-sdk/client-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { UnprocessedItemsError } from '../../lib/aws/errors';
import { backoff, RetryPolicy } from '../../lib/aws/transact';

/**
 * Whole-table reads and writes for the restore drill (restore.ts), on RAW
 * attribute maps: an item is copied as DynamoDB holds it (numbers of any
 * precision, sets, binary), never through the document client's conversion.
 */

export type RawItem = Record<string, AttributeValue>;

const RETRY: RetryPolicy = { attempts: 10, baseDelayMs: 50, maxDelayMs: 5_000 };

/** Every item of a table, page after page, over `segments` parallel scan segments (in no order). */
export async function* scanItems(
  client: DynamoDBClient,
  table: string,
  options: { segments?: number; projection?: string[] } = {},
): AsyncGenerator<RawItem[]> {
  const segments = options.segments ?? 4;
  const names = options.projection?.map((_, i) => `#k${i}`);
  const pages: Array<AsyncGenerator<RawItem[]>> = [];
  for (let segment = 0; segment < segments; segment++)
    pages.push(
      (async function* () {
        let start: RawItem | undefined;
        do {
          const out = await client.send(
            new ScanCommand({
              TableName: table,
              Segment: segment,
              TotalSegments: segments,
              ExclusiveStartKey: start,
              ConsistentRead: true,
              ...(options.projection
                ? {
                    ProjectionExpression: names!.join(', '),
                    ExpressionAttributeNames: Object.fromEntries(options.projection.map((p, i) => [names![i], p])),
                  }
                : {}),
            }),
          );
          if (out.Items?.length) yield out.Items;
          start = out.LastEvaluatedKey;
        } while (start);
      })(),
    );
  // The segments advance together: one page of each in flight at a time.
  const pending = new Map(pages.map((p, i) => [i, p.next().then((r) => ({ i, r }))]));
  while (pending.size > 0) {
    const { i, r } = await Promise.race(pending.values());
    if (r.done) {
      pending.delete(i);
      continue;
    }
    pending.set(
      i,
      pages[i].next().then((next) => ({ i, r: next })),
    );
    yield r.value;
  }
}

/** Items counted by a consistent scan (DescribeTable's ItemCount is refreshed only every 6 hours on AWS). */
export async function countItems(client: DynamoDBClient, table: string): Promise<number> {
  let count = 0;
  let start: RawItem | undefined;
  do {
    const out = await client.send(
      new ScanCommand({ TableName: table, Select: 'COUNT', ExclusiveStartKey: start, ConsistentRead: true }),
    );
    count += out.Count ?? 0;
    start = out.LastEvaluatedKey;
  } while (start);
  return count;
}

/** Puts and deletes in batches of 25, the unprocessed ones sent again with backoff, bounded. */
export async function writeAll(client: DynamoDBClient, table: string, requests: WriteRequest[]): Promise<void> {
  for (let i = 0; i < requests.length; i += 25) {
    let pending = requests.slice(i, i + 25);
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > RETRY.attempts) throw new UnprocessedItemsError(pending.length);
      if (attempt > 1) await sleep(backoff(attempt - 1, RETRY));
      const out = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: pending } }));
      pending = out.UnprocessedItems?.[table] ?? [];
    }
  }
}

/** The items of `keys` that exist, in no order (batches of 100, consistent reads). */
export async function getAll(client: DynamoDBClient, table: string, keys: RawItem[]): Promise<RawItem[]> {
  const found: RawItem[] = [];
  for (let i = 0; i < keys.length; i += 100) {
    let pending = keys.slice(i, i + 100);
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > RETRY.attempts) throw new UnprocessedItemsError(pending.length, 'BatchGetItem');
      if (attempt > 1) await sleep(backoff(attempt - 1, RETRY));
      const out = await client.send(
        new BatchGetItemCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: true } } }),
      );
      found.push(...(out.Responses?.[table] ?? []));
      pending = out.UnprocessedKeys?.[table]?.Keys ?? [];
    }
  }
  return found;
}

export const keyOf = (item: RawItem, keyNames: string[]): RawItem =>
  Object.fromEntries(keyNames.map((k) => [k, item[k]]));

/** One text per item, equal for equal items: attributes in name order, sets as sets (their order is not data). */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value instanceof Uint8Array) return `b:${Buffer.from(value).toString('base64')}`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => {
        const isSet = k === 'SS' || k === 'NS' || k === 'BS';
        const inner = isSet ? `[${(v as unknown[]).map(canonical).sort().join(',')}]` : canonical(v);
        return `${JSON.stringify(k)}:${inner}`;
      });
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

export const sameItem = (a: RawItem, b: RawItem) => canonical(a) === canonical(b);

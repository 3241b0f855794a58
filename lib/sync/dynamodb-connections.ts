import { DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailed } from '../aws/conditions';
import { queryItems } from '../aws/query';
import { transactWrite, TransactItem } from '../aws/transact';
import { TransactionCancelledError } from '../aws/errors';
import { isoTime, parseIsoTime } from '../clock';
import {
  connectionItem,
  connectionKey,
  connectionsPartition,
  DUE_INDEX,
  dueEntry,
  dueShardKey,
  dueShardOf,
  headKey,
} from './keys';
import type { Connection } from './model';
import type { ConnectionStore, SealedToken } from './store';

export interface DynamoSyncStoreDeps {
  documents: DynamoDBDocumentClient;
  table: string;
}

/**
 * The sync table's connections on DynamoDB: a sealed token per user and, while
 * the user has no head, its due entry; each write conditional on the head's
 * presence or absence, so a connection and its head never disagree. Conditions
 * and transactions only (store.ts says what each guarantees); the helpers
 * every write of the table uses are here too (dynamodb-store.ts extends this).
 */
export class DynamoConnectionStore implements ConnectionStore {
  constructor(protected readonly deps: DynamoSyncStoreDeps) {}

  protected get table() {
    return this.deps.table;
  }

  async putConnectionIfNoHead(user: string, sealed: string, createdAt: number, dueAt: number): Promise<boolean> {
    return this.applied([
      { Put: { TableName: this.table, Item: connectionItem(user, sealed, createdAt, dueAt) } },
      {
        ConditionCheck: { TableName: this.table, Key: headKey(user), ConditionExpression: 'attribute_not_exists(PK)' },
      },
    ]);
  }

  async putConnectionIfHead(user: string, sealed: string, createdAt: number, now: number): Promise<boolean> {
    const due = dueEntry(user, now);
    return this.applied([
      { Put: { TableName: this.table, Item: connectionItem(user, sealed, createdAt) } },
      {
        Update: {
          TableName: this.table,
          Key: headKey(user),
          UpdateExpression: 'SET rekeyed_at = :now, due_at = :due, due_shard = :shard ADD revision :one',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':now': isoTime(now), ':due': due.due_at, ':shard': due.due_shard, ':one': 1 },
        },
      },
    ]);
  }

  async sealedToken(user: string): Promise<string | undefined> {
    const item = await this.get(connectionKey(user));
    return typeof item?.token_sealed === 'string' ? item.token_sealed : undefined;
  }

  async connectionDueAt(user: string): Promise<number | undefined> {
    const item = await this.get(connectionKey(user));
    return typeof item?.due_at === 'string' ? parseIsoTime(item.due_at) : undefined;
  }

  async freshDueCount(shard: number, upTo: number): Promise<number> {
    let count = 0;
    let after: Record<string, unknown> | undefined;
    do {
      const page = await this.deps.documents.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: DUE_INDEX,
          KeyConditionExpression: 'due_shard = :s AND due_at <= :upTo',
          // The base table's keys come with every entry: a connection item's is a first sync's.
          FilterExpression: 'PK = :conn',
          ExpressionAttributeValues: {
            ':s': dueShardKey(shard),
            ':upTo': isoTime(upTo),
            ':conn': connectionsPartition,
          },
          Select: 'COUNT',
          ...(after ? { ExclusiveStartKey: after } : {}),
        }),
      );
      count += page.Count ?? 0;
      after = page.LastEvaluatedKey;
    } while (after);
    return count;
  }

  async replaceSealedToken(user: string, old: string, next: string): Promise<boolean> {
    return this.updated({
      TableName: this.table,
      Key: connectionKey(user),
      UpdateExpression: 'SET token_sealed = :new',
      ConditionExpression: 'token_sealed = :old',
      ExpressionAttributeValues: { ':new': next, ':old': old },
    });
  }

  async removeConnection(user: string): Promise<boolean> {
    return this.applied([
      { Delete: { TableName: this.table, Key: connectionKey(user), ConditionExpression: 'attribute_exists(PK)' } },
      { Delete: { TableName: this.table, Key: headKey(user) } },
    ]);
  }

  async markConnectionDue(user: string, dueAt: number): Promise<boolean> {
    return this.applied([
      {
        Update: {
          TableName: this.table,
          Key: connectionKey(user),
          UpdateExpression: 'SET due_at = :due, due_shard = :shard',
          ConditionExpression: 'attribute_exists(PK)',
          ExpressionAttributeValues: { ':due': isoTime(dueAt), ':shard': dueShardKey(dueShardOf(user)) },
        },
      },
      {
        ConditionCheck: { TableName: this.table, Key: headKey(user), ConditionExpression: 'attribute_not_exists(PK)' },
      },
    ]);
  }

  async connectionPage(limit: number, after?: string): Promise<{ items: Connection[]; next?: string }> {
    const page = await this.deps.documents.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'PK = :p',
        ExpressionAttributeValues: { ':p': connectionsPartition },
        ProjectionExpression: 'user_id, created_at',
        Limit: limit,
        ...(after ? { ExclusiveStartKey: connectionKey(after) } : {}),
      }),
    );
    const items = (page.Items ?? []).map((i) => ({ user_id: i.user_id as string, created_at: i.created_at as string }));
    return { items, next: page.LastEvaluatedKey ? items[items.length - 1]?.user_id : undefined };
  }

  async sealedTokenPage(limit: number, after?: string): Promise<{ items: SealedToken[]; next?: string }> {
    const page = await this.deps.documents.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'PK = :p',
        ExpressionAttributeValues: { ':p': connectionsPartition },
        ProjectionExpression: 'user_id, token_sealed',
        Limit: limit,
        ...(after ? { ExclusiveStartKey: connectionKey(after) } : {}),
      }),
    );
    const items = (page.Items ?? []).map((i) => ({
      user_id: i.user_id as string,
      sealed: typeof i.token_sealed === 'string' ? i.token_sealed : '',
    }));
    return { items, next: page.LastEvaluatedKey ? items[items.length - 1]?.user_id : undefined };
  }

  async *connections(): AsyncGenerator<Connection> {
    const items = queryItems(this.deps.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :p',
      ExpressionAttributeValues: { ':p': connectionsPartition },
      ProjectionExpression: 'user_id, created_at',
    });
    for await (const item of items) yield { user_id: item.user_id as string, created_at: item.created_at as string };
  }

  // --- the helpers of every write of the table ------------------------------------

  protected async get(key: Record<string, string>): Promise<Record<string, unknown> | undefined> {
    const { Item } = await this.deps.documents.send(
      new GetCommand({ TableName: this.table, Key: key, ConsistentRead: true }),
    );
    return Item;
  }

  /** A transaction whose refusal is an answer (false), not an error. */
  protected async applied(items: TransactItem[]): Promise<boolean> {
    try {
      await transactWrite(this.deps.documents, items);
      return true;
    } catch (err) {
      if (err instanceof TransactionCancelledError) return false;
      throw err;
    }
  }

  protected async updated(input: ConstructorParameters<typeof UpdateCommand>[0]): Promise<boolean> {
    try {
      await this.deps.documents.send(new UpdateCommand(input));
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }
}

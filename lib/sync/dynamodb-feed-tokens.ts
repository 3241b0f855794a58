import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailed } from '../aws/conditions';
import { queryAll } from '../aws/query';
import { transactWrite } from '../aws/transact';
import { FieldSpec, readItem } from '../util/item';
import type { FeedTokenRecord, FeedTokenStore } from './feed-tokens';
import { connectionKey, feedCountKey, feedListKey, feedListPrefix, feedTokenKey, userPartition } from './keys';

const RECORD: FieldSpec<FeedTokenRecord> = { token_id: 'string', user_id: 'string', created_at: 'string' };
const record = (item: Record<string, unknown>) => readItem(RECORD, item, 'feed token');

/**
 * Feed tokens on DynamoDB (keys.ts): the lookup item by hash, the user's
 * listing item (which keeps the hash, so a revoke by id finds the lookup) and
 * the user's count, always written together in one transaction.
 */
export class DynamoFeedTokenStore implements FeedTokenStore {
  constructor(private readonly deps: { documents: DynamoDBDocumentClient; table: string }) {}

  private get table() {
    return this.deps.table;
  }

  async create(r: FeedTokenRecord, sha256: string, max: number): Promise<boolean> {
    const fields = { token_id: r.token_id, user_id: r.user_id, created_at: r.created_at };
    try {
      await transactWrite(this.deps.documents, [
        {
          Update: {
            TableName: this.table,
            Key: feedCountKey(r.user_id),
            UpdateExpression: 'ADD tokens :one SET entity = :e',
            ConditionExpression: 'attribute_not_exists(tokens) OR tokens < :max',
            ExpressionAttributeValues: { ':one': 1, ':max': max, ':e': 'feedcount' },
          },
        },
        {
          Put: {
            TableName: this.table,
            Item: { ...fields, entity: 'feedtoken', ...feedTokenKey(sha256) },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
        {
          Put: {
            TableName: this.table,
            Item: { ...fields, token_sha256: sha256, entity: 'feedlisting', ...feedListKey(r.user_id, r.token_id) },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
      ]);
      return true;
    } catch (err) {
      if (conditionFailed(err, 0)) return false;
      throw err;
    }
  }

  async list(user: string): Promise<FeedTokenRecord[]> {
    const items = await queryAll(this.deps.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
      ExpressionAttributeValues: { ':p': userPartition(user), ':s': feedListPrefix },
      ConsistentRead: true,
    });
    return items.map(record);
  }

  async revoke(user: string, tokenId: string): Promise<boolean> {
    const key = feedListKey(user, tokenId);
    const { Item } = await this.deps.documents.send(
      new GetCommand({ TableName: this.table, Key: key, ConsistentRead: true }),
    );
    if (!Item || typeof Item.token_sha256 !== 'string') return false;
    try {
      await transactWrite(this.deps.documents, [
        { Delete: { TableName: this.table, Key: key, ConditionExpression: 'attribute_exists(PK)' } },
        { Delete: { TableName: this.table, Key: feedTokenKey(Item.token_sha256) } },
        {
          Update: {
            TableName: this.table,
            Key: feedCountKey(user),
            UpdateExpression: 'ADD tokens :minus',
            ExpressionAttributeValues: { ':minus': -1 },
          },
        },
      ]);
      return true;
    } catch (err) {
      // A concurrent revoke of the same token took it first.
      if (conditionFailed(err, 0)) return false;
      throw err;
    }
  }

  async hasConnection(user: string): Promise<boolean> {
    const { Item } = await this.deps.documents.send(
      new GetCommand({
        TableName: this.table,
        Key: connectionKey(user),
        ProjectionExpression: 'PK',
        ConsistentRead: true,
      }),
    );
    return !!Item;
  }

  async byHash(sha256: string): Promise<FeedTokenRecord | undefined> {
    const { Item } = await this.deps.documents.send(
      new GetCommand({ TableName: this.table, Key: feedTokenKey(sha256), ConsistentRead: true }),
    );
    return Item ? record(Item) : undefined;
  }
}

import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { conditionFailed } from '../aws/conditions';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Claim, IdempotencyRecord, IdempotencyStore, StoredResponse } from './store';

/** Thin: the conditions only. Policy is in service.ts. */
export class DynamoIdempotencyStore implements IdempotencyStore {
  constructor(private readonly deps: { documents: DynamoDBDocumentClient; table: string }) {}

  async claim(key: { PK: string; SK: string }, record: IdempotencyRecord, nowMs: number): Promise<Claim> {
    try {
      await this.deps.documents.send(
        new PutCommand({
          TableName: this.deps.table,
          Item: { ...record, ...key },
          ConditionExpression:
            'attribute_not_exists(PK) OR expires_at < :now_s OR (#status = :in_progress AND in_progress_until < :now_ms)',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':now_s': Math.floor(nowMs / 1000),
            ':now_ms': nowMs,
            ':in_progress': 'in_progress',
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { taken: true };
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException && err.Item)
        return { taken: false, holder: unmarshall(err.Item) as IdempotencyRecord };
      throw err;
    }
  }

  async complete(key: { PK: string; SK: string }, token: string, response: StoredResponse): Promise<void> {
    await this.deps.documents.send(
      new UpdateCommand({
        TableName: this.deps.table,
        Key: key,
        UpdateExpression: 'SET #status = :completed, #response = :response',
        ConditionExpression: '#token = :token',
        ExpressionAttributeNames: { '#status': 'status', '#response': 'response', '#token': 'token' },
        ExpressionAttributeValues: { ':completed': 'completed', ':response': response, ':token': token },
      }),
    );
  }

  async release(key: { PK: string; SK: string }, token: string): Promise<void> {
    try {
      await this.deps.documents.send(
        new DeleteCommand({
          TableName: this.deps.table,
          Key: key,
          ConditionExpression: '#token = :token',
          ExpressionAttributeNames: { '#token': 'token' },
          ExpressionAttributeValues: { ':token': token },
        }),
      );
    } catch (err) {
      if (!conditionFailed(err)) throw err; // another attempt holds it now: not ours to delete
    }
  }
}

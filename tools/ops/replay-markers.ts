import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { conditionFailed } from '../../lib/aws/conditions';
import { queryAll } from '../../lib/aws/query';
import { isoTime } from '../../lib/clock';
import { REPLAY_PARTITION, replayMarkerKey } from './keys';

/**
 * The durable half of "a failure record is replayed at most once"
 * (docs/decisions.md, 280): before invoking, a run claims the message id with
 * ONE conditional put; only the claimant invokes. After Lambda accepted the
 * invoke the marker says `invoked`, and whoever finds it so deletes the queue
 * message without invoking again. A marker left `invoking` means nobody knows
 * whether Lambda took the invoke (the run died, or no answer came): it is
 * never invoked again by the tool, only after an operator's `--forget`.
 */

export type MarkerState = 'invoking' | 'invoked';

export interface ReplayMarker {
  message_id: string;
  state: MarkerState;
  run_id: string;
  function_name: string;
  claimed_at: string;
  invoked_at?: string;
  request_id?: string;
}

export type ClaimResult = { claimed: true } | { claimed: false; held: ReplayMarker };

export interface ReplayMarkers {
  claim(marker: Pick<ReplayMarker, 'message_id' | 'run_id' | 'function_name'>, now: number): Promise<ClaimResult>;
  markInvoked(messageId: string, runId: string, requestId: string | undefined, now: number): Promise<void>;
  /** Drops a marker that is still `invoking` (of `runId` when given); false when there was none such. */
  release(messageId: string, runId?: string): Promise<boolean>;
  get(messageId: string): Promise<ReplayMarker | undefined>;
  list(): Promise<ReplayMarker[]>;
}

/** Kept past the queue's 14-day retention: a record can never outlive its marker. */
export const MARKER_TTL_DAYS = 15;

const FIELDS = ['message_id', 'state', 'run_id', 'function_name', 'claimed_at', 'invoked_at', 'request_id'] as const;

function fromItem(item: Record<string, unknown>): ReplayMarker {
  const out: Record<string, unknown> = {};
  for (const f of FIELDS) if (item[f] !== undefined) out[f] = item[f];
  return out as unknown as ReplayMarker;
}

export class DynamoReplayMarkers implements ReplayMarkers {
  constructor(private readonly deps: { documents: DynamoDBDocumentClient; table: string }) {}

  async claim(marker: Pick<ReplayMarker, 'message_id' | 'run_id' | 'function_name'>, now: number) {
    try {
      await this.deps.documents.send(
        new PutCommand({
          TableName: this.deps.table,
          Item: {
            ...replayMarkerKey(marker.message_id),
            ...marker,
            state: 'invoking',
            claimed_at: isoTime(now),
            expires_at: Math.floor(now / 1000) + MARKER_TTL_DAYS * 86_400,
          },
          ConditionExpression: 'attribute_not_exists(PK)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { claimed: true } as const;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException && err.Item)
        return { claimed: false, held: fromItem(unmarshall(err.Item)) } as const;
      throw err;
    }
  }

  async markInvoked(messageId: string, runId: string, requestId: string | undefined, now: number): Promise<void> {
    await this.deps.documents.send(
      new UpdateCommand({
        TableName: this.deps.table,
        Key: replayMarkerKey(messageId),
        UpdateExpression: requestId
          ? 'SET #state = :invoked, invoked_at = :at, request_id = :rid'
          : 'SET #state = :invoked, invoked_at = :at',
        ConditionExpression: '#state = :invoking AND run_id = :run',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':invoked': 'invoked',
          ':invoking': 'invoking',
          ':run': runId,
          ':at': isoTime(now),
          ...(requestId ? { ':rid': requestId } : {}),
        },
      }),
    );
  }

  async release(messageId: string, runId?: string): Promise<boolean> {
    try {
      await this.deps.documents.send(
        new DeleteCommand({
          TableName: this.deps.table,
          Key: replayMarkerKey(messageId),
          ConditionExpression: runId ? '#state = :invoking AND run_id = :run' : '#state = :invoking',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':invoking': 'invoking', ...(runId ? { ':run': runId } : {}) },
        }),
      );
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  async get(messageId: string): Promise<ReplayMarker | undefined> {
    const out = await this.deps.documents.send(
      new GetCommand({ TableName: this.deps.table, Key: replayMarkerKey(messageId), ConsistentRead: true }),
    );
    return out.Item ? fromItem(out.Item) : undefined;
  }

  async list(): Promise<ReplayMarker[]> {
    const items = await queryAll(this.deps.documents, {
      TableName: this.deps.table,
      KeyConditionExpression: 'PK = :pk',
      ExpressionAttributeValues: { ':pk': REPLAY_PARTITION },
    });
    return items.map(fromItem);
  }
}

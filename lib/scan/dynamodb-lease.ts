import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailed } from '../aws/conditions';
import { POLLER_KEY } from './keys';
import type { Lease, PollerLeaseStore, WakeRecord } from './poller';

/** The poller's lease on one item of the scan table (policy: poller.ts); every change is one conditional write. */
export class DynamoDbPollerLease implements PollerLeaseStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async demand(candidate: Lease, now: number): Promise<Lease> {
    // if_not_exists: the candidate becomes the holder only when no lease is held; demand_at is written either way.
    const { Attributes } = await this.documents.send(
      new UpdateCommand({
        TableName: this.table,
        Key: POLLER_KEY,
        UpdateExpression: 'SET lease = if_not_exists(lease, :candidate), demand_at = :now',
        ExpressionAttributeValues: { ':candidate': candidate, ':now': now },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes!.lease as Lease;
  }

  acquire(candidate: Lease, now: number): Promise<boolean> {
    return this.conditional('SET lease = :candidate', 'attribute_not_exists(lease) OR lease.expires_at < :now', {
      ':candidate': candidate,
      ':now': now,
    });
  }

  confirm(holder: string, expiresAt: number): Promise<boolean> {
    return this.conditional('SET lease.expires_at = :expires', 'lease.holder = :holder', {
      ':holder': holder,
      ':expires': expiresAt,
    });
  }

  handOver(from: string, to: Lease): Promise<boolean> {
    return this.conditional('SET lease = :to', 'lease.holder = :from', { ':from': from, ':to': to });
  }

  release(holder: string, quietSince: number): Promise<boolean> {
    return this.conditional(
      'REMOVE lease',
      'lease.holder = :holder AND (attribute_not_exists(demand_at) OR demand_at < :quiet)',
      { ':holder': holder, ':quiet': quietSince },
    );
  }

  recordWake(holder: string, wake: WakeRecord): Promise<boolean> {
    return this.conditional('SET wake = :wake', 'lease.holder = :holder', {
      ':holder': holder,
      ':wake': { mode: wake.mode, at: wake.at },
    });
  }

  async read(): Promise<{ lease?: Lease; demand_at?: number; wake?: WakeRecord }> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: POLLER_KEY, ConsistentRead: true }),
    );
    return {
      lease: Item?.lease as Lease | undefined,
      demand_at: Item?.demand_at as number | undefined,
      wake: Item?.wake as WakeRecord | undefined,
    };
  }

  private async conditional(update: string, condition: string, values: Record<string, unknown>): Promise<boolean> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: POLLER_KEY,
          UpdateExpression: update,
          ConditionExpression: condition,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }
}

import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailed } from '../aws/conditions';
import { paceKey } from './keys';
import { gcra, Pace, PaceStore, Taken } from './pacer';

/**
 * The pacing schedules on DynamoDB (pacer.ts): one item per schedule. A take is ONE conditional
 * update: behind a backlog `ADD tat :interval` (atomic, so concurrent takers never collide);
 * on an idle schedule `SET tat = now + interval`, conditional on it still being idle. A
 * condition that fails returns the item as it stands (no extra read) and the take tries again.
 */
export class DynamoPaceStore implements PaceStore {
  /** The last `tat` this process saw per schedule: only picks which write to try first (the conditions decide). */
  private readonly seen = new Map<string, number | undefined>();

  constructor(private readonly deps: { documents: DynamoDBDocumentClient; table: string }) {}

  async takePace(key: string, now: number, pace: Pace, latest: number, expiresAt: number): Promise<Taken> {
    const exp = Math.ceil(expiresAt / 1000);
    // Unknown at first: under load a schedule has a backlog, so the first write assumes one.
    let tat: number | undefined | 'unknown' = this.seen.has(key) ? this.seen.get(key) : 'unknown';
    for (let turn = 0; turn < 8; turn++) {
      const backlog = tat === 'unknown' || (tat !== undefined && tat > now);
      const next = gcra(tat === 'unknown' ? undefined : tat, now, pace);
      // A hint may be stale: only a tat read from the table refuses.
      if (tat !== 'unknown' && next.at > latest && turn > 0) return { busyUntil: next.at };
      const write = backlog
        ? {
            // tat - burst <= latest, as a bound on tat (conditions have no arithmetic).
            UpdateExpression: 'ADD tat :interval SET expires_at = :exp, entity = :e',
            ConditionExpression: 'tat > :now AND tat <= :latest',
            ExpressionAttributeValues: { ':interval': pace.intervalMs, ':latest': latest + pace.burstMs },
          }
        : {
            UpdateExpression: 'SET tat = :tat, expires_at = :exp, entity = :e',
            ConditionExpression: 'attribute_not_exists(tat) OR tat <= :now',
            ExpressionAttributeValues: { ':tat': next.tat },
          };
      try {
        const out = await this.deps.documents.send(
          new UpdateCommand({
            TableName: this.deps.table,
            Key: paceKey(key),
            UpdateExpression: write.UpdateExpression,
            ConditionExpression: write.ConditionExpression,
            ExpressionAttributeValues: { ...write.ExpressionAttributeValues, ':now': now, ':exp': exp, ':e': 'pace' },
            ReturnValues: 'UPDATED_OLD',
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        // Behind a backlog the send instant is the tat this write moved on from.
        const old = backlog ? Number(out.Attributes?.tat) : undefined;
        this.seen.set(key, old === undefined ? next.tat : old + pace.intervalMs);
        return { at: old === undefined ? next.at : Math.max(now, old - pace.burstMs) };
      } catch (err) {
        if (!conditionFailed(err)) throw err;
        // The item as it stood (marshalled: the document client leaves errors alone); a
        // DynamoDB that does not return it (DynamoDB Local) costs a consistent read.
        const item = (err as { Item?: Record<string, { N?: string }> }).Item;
        tat = item ? (item.tat?.N === undefined ? undefined : Number(item.tat.N)) : await this.tat(key);
        this.seen.set(key, tat);
      }
    }
    throw new Error(`pace ${key}: the schedule kept moving`);
  }

  async pausePace(key: string, until: number, pace: Pace, expiresAt: number): Promise<void> {
    const exp = Math.ceil(expiresAt / 1000);
    // Two guarded writes: neither ever moves the schedule or the pause backwards.
    for (const [field, value] of [
      ['tat', until + pace.burstMs],
      ['paused_until', until],
    ] as const) {
      try {
        await this.deps.documents.send(
          new UpdateCommand({
            TableName: this.deps.table,
            Key: paceKey(key),
            UpdateExpression: `SET ${field} = :v, expires_at = :exp, entity = :e`,
            ConditionExpression: `attribute_not_exists(${field}) OR ${field} < :v`,
            ExpressionAttributeValues: { ':v': value, ':exp': exp, ':e': 'pace' },
          }),
        );
      } catch (err) {
        if (!conditionFailed(err)) throw err;
      }
    }
  }

  async pacePausedUntil(key: string): Promise<number> {
    const out = await this.deps.documents.send(
      new GetCommand({
        TableName: this.deps.table,
        Key: paceKey(key),
        ProjectionExpression: 'paused_until',
        ConsistentRead: true,
      }),
    );
    return Number(out.Item?.paused_until ?? 0);
  }

  async paceQueuedMs(key: string, now: number): Promise<number> {
    const out = await this.deps.documents.send(
      new GetCommand({ TableName: this.deps.table, Key: paceKey(key), ProjectionExpression: 'tat' }),
    );
    return Math.max(0, Number(out.Item?.tat ?? 0) - now);
  }

  private async tat(key: string): Promise<number | undefined> {
    const out = await this.deps.documents.send(
      new GetCommand({
        TableName: this.deps.table,
        Key: paceKey(key),
        ProjectionExpression: 'tat',
        ConsistentRead: true,
      }),
    );
    return out.Item?.tat === undefined ? undefined : Number(out.Item.tat);
  }
}

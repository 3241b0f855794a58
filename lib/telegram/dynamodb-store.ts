import { conditionFailed, orRefuse } from '../aws/conditions';
import { transactWrite } from '../aws/transact';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Clock, isoTime, systemClock } from '../clock';
import { newId } from '../ident';
import {
  deliveryItem,
  deliveryKey,
  FAILURE_PARTITION,
  failureFromItem,
  failureKey,
  failureToItem,
  MOVE_PARTITION,
  moveKey,
  updateKey,
} from './keys';
import { ClaimLostError } from './errors';
import {
  ChatMoves,
  ClaimResult,
  DeliveryRef,
  DeliveryStatus,
  DeliveryStore,
  Failure,
  UPDATE_TTL_S,
  UpdateClaim,
  UpdateLedger,
} from './store';

const MAX_REASON_CHARS = 500;

/**
 * Every write after the claim: `owner` still holds the delivery AND it is not
 * settled yet. Owner alone is not enough: settling (sent, failed, uncertain)
 * leaves the owner in place, so without the status a second settle, or the
 * late worker of a delivery already taken over as `uncertain`, would write again
 * (a second failure entry, or `retrying` and a resend after "not resent").
 */
const HELD_LIVE = '#o = :o AND #s IN (:live_sending, :live_retrying)';
const LIVE = { ':live_sending': 'sending', ':live_retrying': 'retrying' };

export class DynamoDeliveryStore implements DeliveryStore, UpdateLedger, ChatMoves {
  private readonly documents: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly now: Clock;

  constructor(opts: { documents: DynamoDBDocumentClient; table: string; now?: Clock }) {
    this.documents = opts.documents;
    this.table = opts.table;
    this.now = opts.now ?? systemClock;
  }

  async claim(ref: DeliveryRef, owner: string, now: number, leaseUntil: number): Promise<ClaimResult> {
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.table,
          Item: deliveryItem(ref, owner, leaseUntil, isoTime(now)),
          ConditionExpression: 'attribute_not_exists(PK) OR (#s = :retrying AND lease_until < :now)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':retrying': 'retrying', ':now': now },
        }),
      );
      return { claimed: true, attempts: 0 };
    } catch (err) {
      if (!conditionFailed(err)) throw err;
    }
    const held = await this.get(ref);
    if (!held) return { claimed: false, status: 'retrying' }; // deleted meanwhile: never by us; treat as busy
    const status = held.status as DeliveryStatus;
    if (status === 'sending' && Number(held.lease_until) < now) {
      // Its worker died after the request may have reached Telegram: at most once, never a second send.
      const settled = await this.settle(
        ref,
        String(held.owner),
        'uncertain',
        'crashed while sending: delivery unknown, not resent',
        Number(held.lease_until),
      );
      return settled
        ? { claimed: false, status: 'uncertain', settledNow: true }
        : { claimed: false, status: (await this.get(ref))?.status as DeliveryStatus };
    }
    return { claimed: false, status };
  }

  async markSending(ref: DeliveryRef, owner: string, leaseUntil: number): Promise<void> {
    await this.update(ref, owner, 'SET #s = :s, lease_until = :l', { ':s': 'sending', ':l': leaseUntil });
  }

  async markRetrying(
    ref: DeliveryRef,
    owner: string,
    attempts: number,
    error: string,
    leaseUntil: number,
  ): Promise<void> {
    await this.update(ref, owner, 'SET #s = :s, attempts = :a, last_error = :e, lease_until = :l', {
      ':s': 'retrying',
      ':a': attempts,
      ':e': error.slice(0, MAX_REASON_CHARS),
      ':l': leaseUntil,
    });
  }

  async markSent(ref: DeliveryRef, owner: string, messageId: number): Promise<void> {
    await this.update(ref, owner, 'SET #s = :s, message_id = :m, sent_at = :t', {
      ':s': 'sent',
      ':m': messageId,
      ':t': isoTime(this.now()),
    });
  }

  async release(ref: DeliveryRef, owner: string): Promise<void> {
    // `retrying` with a lease already over: the next claim takes it over (nothing is in flight).
    await this.update(ref, owner, 'SET #s = :s, lease_until = :l', { ':s': 'retrying', ':l': 0 });
  }

  async begin(updateId: number, now: number, leaseUntil: number): Promise<UpdateClaim> {
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            entity: 'update',
            status: 'handling',
            lease_until: leaseUntil,
            seen_at: isoTime(now),
            expires_at: Math.floor(now / 1000) + UPDATE_TTL_S,
            ...updateKey(updateId),
          },
          // An expired record TTL has not removed yet counts as absent; a handling whose lease is over is taken.
          ConditionExpression:
            'attribute_not_exists(PK) OR expires_at < :nowS OR (#s = :handling AND lease_until < :now)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':nowS': Math.floor(now / 1000), ':now': now, ':handling': 'handling' },
        }),
      );
      return 'first';
    } catch (err) {
      if (!conditionFailed(err)) throw err;
    }
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: updateKey(updateId), ConsistentRead: true }),
    );
    // A record without a status is a seen-record written before leases: handled.
    return Item?.status === 'handling' ? 'busy' : 'done';
  }

  async finish(updateId: number, now: number): Promise<void> {
    await this.documents.send(
      new UpdateCommand({
        TableName: this.table,
        Key: updateKey(updateId),
        UpdateExpression: 'SET #s = :done, done_at = :t, expires_at = :e REMOVE lease_until',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':done': 'done',
          ':t': isoTime(now),
          ':e': Math.floor(now / 1000) + UPDATE_TTL_S,
        },
      }),
    );
  }

  async abandon(updateId: number): Promise<void> {
    await this.documents
      .send(
        new UpdateCommand({
          TableName: this.table,
          Key: updateKey(updateId),
          UpdateExpression: 'SET lease_until = :zero',
          ConditionExpression: '#s = :handling',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: { ':zero': 0, ':handling': 'handling' },
        }),
      )
      // Finished by another delivery meanwhile: nothing to give back.
      .catch((err) => {
        if (!conditionFailed(err)) throw err;
      });
  }

  async recordMove(from: number, to: number, now: number): Promise<void> {
    if (!Number.isSafeInteger(to)) throw new Error('migrate_to_chat_id is not an integer');
    await this.documents.send(
      new PutCommand({
        TableName: this.table,
        Item: { entity: 'chat_move', from, to, moved_at: isoTime(now), ...moveKey(from) },
      }),
    );
  }

  async moves(): Promise<Map<number, number>> {
    const moves = new Map<number, number>();
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'PK = :p',
          ExpressionAttributeValues: { ':p': MOVE_PARTITION },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        const from = Number(item.SK);
        if (Number.isSafeInteger(from) && Number.isSafeInteger(item.to)) moves.set(from, item.to as number);
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return moves;
  }

  async markFailed(ref: DeliveryRef, owner: string, reason: string): Promise<void> {
    if (!(await this.settle(ref, owner, 'failed', reason))) throw new ClaimLostError(ref);
  }

  async markUncertain(ref: DeliveryRef, owner: string, reason: string): Promise<void> {
    if (!(await this.settle(ref, owner, 'uncertain', reason))) throw new ClaimLostError(ref);
  }

  async recordFailure(failure: Omit<Failure, 'id' | 'failed_at'>): Promise<void> {
    await this.documents.send(new PutCommand({ TableName: this.table, Item: this.failureItem(failure) }));
  }

  async claimRetry(id: string, now: number): Promise<Failure | 'taken' | 'missing'> {
    try {
      const out = await this.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: failureKey(id),
          UpdateExpression: 'SET retried_at = :at',
          ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(retried_at)',
          ExpressionAttributeValues: { ':at': isoTime(now) },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return failureFromItem(out.Attributes!);
    } catch (err) {
      if (!conditionFailed(err)) throw err;
      const old = (err as { Item?: Record<string, unknown> }).Item;
      if (old) return 'taken';
      const { Item } = await this.documents.send(
        new GetCommand({ TableName: this.table, Key: failureKey(id), ConsistentRead: true }),
      );
      return Item ? 'taken' : 'missing';
    }
  }

  async retrySent(id: string, messageId: number): Promise<void> {
    await this.documents.send(
      new UpdateCommand({
        TableName: this.table,
        Key: failureKey(id),
        UpdateExpression: 'SET retry_message_id = :m',
        ConditionExpression: 'attribute_exists(retried_at)',
        ExpressionAttributeValues: { ':m': messageId },
      }),
    );
  }

  async releaseRetry(id: string, claimedAt: string): Promise<void> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: failureKey(id),
          UpdateExpression: 'REMOVE retried_at',
          ConditionExpression: 'retried_at = :at AND attribute_not_exists(retry_message_id)',
          ExpressionAttributeValues: { ':at': claimedAt },
        }),
      );
    } catch (err) {
      if (!conditionFailed(err)) throw err;
    }
  }

  async listFailures(limit: number): Promise<Failure[]> {
    const page = await this.documents.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: 'PK = :p',
        ExpressionAttributeValues: { ':p': FAILURE_PARTITION },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return (page.Items ?? []).map(failureFromItem);
  }

  /** A final status and its failure item, in one transaction, only while `owner` (and `extra`) still hold. */
  private async settle(
    ref: DeliveryRef,
    owner: string,
    status: 'failed' | 'uncertain',
    reason: string,
    leaseUntil?: number,
  ): Promise<boolean> {
    // The takeover of a dead sender also checks its lease did not move (it was alive after all).
    const lease = leaseUntil === undefined ? {} : { ':l': leaseUntil };
    try {
      await transactWrite(
        this.documents,
        [
          {
            Update: {
              TableName: this.table,
              Key: deliveryKey(ref.eventId, ref.chatId),
              UpdateExpression: 'SET #s = :s, reason = :r',
              ConditionExpression: leaseUntil === undefined ? HELD_LIVE : `${HELD_LIVE} AND lease_until = :l`,
              ExpressionAttributeNames: { '#s': 'status', '#o': 'owner' },
              ExpressionAttributeValues: {
                ...lease,
                ':s': status,
                ':r': reason.slice(0, MAX_REASON_CHARS),
                ':o': owner,
                ...LIVE,
              },
            },
          },
          {
            Put: {
              TableName: this.table,
              Item: this.failureItem({
                event_id: ref.eventId,
                chat_id: ref.chatId,
                download_id: ref.downloadId,
                kind: ref.kind,
                reason: `${status}: ${reason}`,
              }),
            },
          },
        ],
        { operation: `settle:${ref.eventId}:${ref.chatId}` },
      );
      return true;
    } catch (err) {
      // Another owner (or a lease that moved) holds the delivery: not ours to settle.
      if (conditionFailed(err, 0)) return false;
      throw err;
    }
  }

  private async update(
    ref: DeliveryRef,
    owner: string,
    expression: string,
    values: Record<string, unknown>,
  ): Promise<void> {
    await orRefuse(
      () =>
        this.documents.send(
          new UpdateCommand({
            TableName: this.table,
            Key: deliveryKey(ref.eventId, ref.chatId),
            UpdateExpression: expression,
            ConditionExpression: HELD_LIVE,
            ExpressionAttributeNames: { '#s': 'status', '#o': 'owner' },
            ExpressionAttributeValues: { ...values, ':o': owner, ...LIVE },
          }),
        ),
      (err) => (conditionFailed(err) ? new ClaimLostError(ref) : undefined),
    );
  }

  private async get(ref: DeliveryRef): Promise<Record<string, unknown> | undefined> {
    const got = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: deliveryKey(ref.eventId, ref.chatId), ConsistentRead: true }),
    );
    return got.Item;
  }

  private failureItem(f: Omit<Failure, 'id' | 'failed_at'>): Record<string, unknown> {
    // One reading: the id's time and failed_at name the same instant.
    const ms = this.now();
    return failureToItem({ ...f, reason: f.reason.slice(0, MAX_REASON_CHARS), id: newId(ms), failed_at: isoTime(ms) });
  }
}

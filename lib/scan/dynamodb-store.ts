import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailed } from '../aws/conditions';
import { queryAll } from '../aws/query';
import { RetryPolicy, transactWrite, TransactItem } from '../aws/transact';
import { TransactionConflictError } from '../aws/errors';
import { TransactionCancelledError } from '../aws/errors';
import type { Envelope, ScanRequest } from './contract';
import {
  createdSortTime,
  dayPartition,
  fromItem,
  jobIdOfKey,
  jobKey,
  metricKey,
  RECENT_INDEX,
  SLOTS_KEY,
  STATE_INDEX,
  statePartition,
  summaryFromItem,
  toItem,
} from './keys';
import {
  finished,
  holdsSlot,
  isInState,
  JobState,
  JobSummary,
  newJob,
  polled,
  PUBLISH_LEASE_MS,
  ScanJob,
  startSubmitted,
  submitted,
} from './model';
import type { PollPatch } from './model';
import type { ScanJobStore } from './store';

/**
 * The scan job store on DynamoDB: conditions and transactions only. Each move
 * of a job is model.ts's (`startSubmitted`, `finished`, …), written here as a
 * CAS on the state and revision read; the policy is in gateway.ts. See
 * store.ts for the guarantees.
 */

/** Finished jobs are kept this long for dedup and re-acks, then expire (TTL). */
const RETENTION_S = 7 * 24 * 3600;
/** A single try: the request path never waits on the slot counter's conflicts. */
const ONE_TRY: RetryPolicy = { attempts: 1, baseDelayMs: 0, maxDelayMs: 0 };

export class DynamoDbScanJobStore implements ScanJobStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async create(
    request: ScanRequest,
    requestHash: string,
    now: number,
    maxInflight: number,
  ): Promise<{ created: boolean; job: ScanJob }> {
    const starting = newJob(request, requestHash, now, true);
    const queued = newJob(request, requestHash, now, false);
    // One write takes the id AND a slot. The counter is one hot item: under a burst, a request does not queue
    // up behind the others' transactions (no conflict retries); it creates the job queued instead, and the
    // poller — which starts queued jobs oldest first — gives it the next slot.
    try {
      await transactWrite(this.documents, [this.putNew(starting), this.takeSlot(maxInflight)], ONE_TRY);
      return { created: true, job: starting };
    } catch (err) {
      if (err instanceof TransactionCancelledError && err.failedConditions().includes(0))
        return { created: false, job: await this.holder(err, request.job_id) };
      if (!(err instanceof TransactionCancelledError) && !(err instanceof TransactionConflictError)) throw err;
    }
    try {
      await transactWrite(this.documents, [this.putNew(queued)]);
      return { created: true, job: queued };
    } catch (err) {
      if (!(err instanceof TransactionCancelledError)) throw err;
      return { created: false, job: await this.holder(err, request.job_id) };
    }
  }

  async get(jobId: string): Promise<ScanJob | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: jobKey(jobId), ConsistentRead: true }),
    );
    return Item ? fromItem(Item) : undefined;
  }

  async inState(state: JobState | 'unpublished', limit = 100): Promise<ScanJob[]> {
    // The index is eventually consistent, so it is only a hint: each job is re-read.
    const keys = await this.indexKeys(state, limit);
    const jobs = await Promise.all(keys.map((k) => this.get(jobIdOfKey(k.PK as string))));
    return jobs.filter((j): j is ScanJob => j !== undefined && isInState(j, state));
  }

  async recent(since: number, now: number, limit: number): Promise<JobSummary[]> {
    const out: JobSummary[] = [];
    // Newest day first; within a day newest first. A day's partition is one query (paged by queryAll's pages).
    for (let day = now; out.length < limit && dayPartition(day) >= dayPartition(since); day -= 24 * 3600_000) {
      const items = await queryAll(
        this.documents,
        {
          TableName: this.table,
          IndexName: RECENT_INDEX,
          KeyConditionExpression: 'GSI2PK = :day AND GSI2SK >= :since',
          ExpressionAttributeValues: { ':day': dayPartition(day), ':since': createdSortTime(since) },
          ScanIndexForward: false,
        },
        limit - out.length,
      );
      out.push(...items.map(summaryFromItem));
    }
    return out;
  }

  async countInState(state: JobState, limit = 1000): Promise<number> {
    return (await this.indexKeys(state, limit)).length;
  }

  async startSubmitted(
    job: ScanJob,
    now: number,
    maxInflight: number,
    inboxName: string,
    deadline: number,
  ): Promise<ScanJob | undefined> {
    const next = startSubmitted(job, now, inboxName, deadline);
    if (!next) return undefined;
    return this.written(job, next, [this.takeSlot(maxInflight)]);
  }

  submitted(job: ScanJob, inboxName: string, submittedAt: number, deadline: number): Promise<ScanJob | undefined> {
    return this.written(job, submitted(job, inboxName, submittedAt, deadline));
  }

  recordPoll(job: ScanJob, patch: PollPatch): Promise<ScanJob | undefined> {
    return this.written(job, polled(job, patch));
  }

  finish(job: ScanJob, result: Envelope, now: number): Promise<ScanJob | undefined> {
    return this.written(job, finished(job, result, now), holdsSlot(job) ? [this.releaseSlot()] : []);
  }

  async claimPublish(job: ScanJob, now: number): Promise<boolean> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: jobKey(job.job_id),
          UpdateExpression: 'SET publish_lease = :until',
          ConditionExpression:
            '#state = :finished AND published = :false AND (attribute_not_exists(publish_lease) OR publish_lease < :now)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':until': now + PUBLISH_LEASE_MS,
            ':finished': 'finished',
            ':false': false,
            ':now': now,
          },
        }),
      );
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  async markPublished(jobId: string, now: number): Promise<void> {
    await this.documents.send(
      new UpdateCommand({
        TableName: this.table,
        Key: jobKey(jobId),
        UpdateExpression: 'SET published = :true, published_at = :now, expires_at = :exp REMOVE GSI1PK, GSI1SK',
        ExpressionAttributeValues: { ':true': true, ':now': now, ':exp': Math.floor(now / 1000) + RETENTION_S },
      }),
    );
  }

  async slotsInUse(): Promise<number> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: SLOTS_KEY, ConsistentRead: true }),
    );
    return (Item?.in_use as number | undefined) ?? 0;
  }

  async count(metric: string): Promise<void> {
    await this.documents.send(
      new UpdateCommand({
        TableName: this.table,
        Key: metricKey(metric),
        UpdateExpression: 'ADD #n :one',
        ExpressionAttributeNames: { '#n': 'count' },
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
  }

  async counter(metric: string): Promise<number> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: metricKey(metric), ConsistentRead: true }),
    );
    return (Item?.count as number | undefined) ?? 0;
  }

  private indexKeys(state: string, limit: number): Promise<Record<string, unknown>[]> {
    return queryAll(
      this.documents,
      {
        TableName: this.table,
        IndexName: STATE_INDEX,
        KeyConditionExpression: 'GSI1PK = :s',
        ExpressionAttributeValues: { ':s': statePartition(state) },
        Limit: limit,
      },
      limit,
    );
  }

  /** The job that holds an id, from the refused put (no second read) or, on emulators that omit it, a consistent read. */
  private async holder(err: TransactionCancelledError, jobId: string): Promise<ScanJob> {
    const item = err.reasons[0]?.item;
    if (item) return fromItem(item);
    const job = await this.get(jobId);
    if (!job) throw err;
    return job;
  }

  private putNew(job: ScanJob): TransactItem {
    return { Put: { TableName: this.table, Item: toItem(job), ConditionExpression: 'attribute_not_exists(PK)' } };
  }

  private takeSlot(maxInflight: number): TransactItem {
    return {
      Update: {
        TableName: this.table,
        Key: SLOTS_KEY,
        UpdateExpression: 'ADD in_use :one',
        ConditionExpression: 'attribute_not_exists(in_use) OR in_use < :max',
        ExpressionAttributeValues: { ':one': 1, ':max': maxInflight },
      },
    };
  }

  private releaseSlot(): TransactItem {
    return {
      Update: {
        TableName: this.table,
        Key: SLOTS_KEY,
        UpdateExpression: 'ADD in_use :minus',
        ConditionExpression: 'in_use > :zero',
        ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
      },
    };
  }

  /** `next` written as a CAS on the state and revision of `job`, with the slot's move in the same write; undefined if moved. */
  private async written(job: ScanJob, next: ScanJob, slot: TransactItem[] = []): Promise<ScanJob | undefined> {
    try {
      await transactWrite(this.documents, [this.cas(job, next), ...slot]);
      return next;
    } catch (err) {
      if (err instanceof TransactionCancelledError) return undefined;
      throw err;
    }
  }

  private cas(job: ScanJob, next: ScanJob): TransactItem {
    return {
      Put: {
        TableName: this.table,
        Item: toItem(next),
        ConditionExpression: '#state = :state AND revision = :rev',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':state': job.state, ':rev': job.revision },
      },
    };
  }
}

import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { queryAll } from '../aws/query';
import { TransactionCancelledError, transactWrite, TransactItem } from '../aws/transact';
import type { Envelope, ScanRequest } from './contract';
import { jobKey, SLOTS_KEY, STATE_INDEX, stateIndexKeys } from './keys';
import type { SettleState } from './settle';

/**
 * Durable scan jobs (DESIGN §4). Every transition is a CAS on the job's
 * state and revision. The in-flight counter is taken in the SAME transaction
 * that moves a job queued → starting, and released in the SAME transaction
 * that moves it to finished: no slot can leak, and two polls racing on one
 * job cannot both finish it.
 */

export type JobState = 'queued' | 'starting' | 'submitted' | 'finished';

export interface ScanJob {
  job_id: string;
  request: ScanRequest;
  state: JobState;
  created_at: number;
  started_at?: number;
  deadline?: number;
  inbox_name?: string;
  settle?: SettleState;
  result?: Envelope;
  published: boolean;
  /** Until when one poller holds the right to publish the stored result. */
  publish_lease?: number;
  revision: number;
}

/** How long a publisher holds a job's result before another may re-publish it. */
export const PUBLISH_LEASE_MS = 30_000;
/** Finished jobs are kept this long for dedup and re-acks, then expire (TTL). */
const RETENTION_S = 7 * 24 * 3600;

export class ScanJobStore {
  constructor(private readonly documents: DynamoDBDocumentClient, private readonly table: string) {}

  /** Conditional put: the job_id is the dedup key (replaces the seed's in-process LRU). */
  async create(request: ScanRequest, now: number): Promise<{ created: true; job: ScanJob } | { created: false; job: ScanJob }> {
    const job: ScanJob = { job_id: request.job_id, request, state: 'queued', created_at: now, published: false, revision: 1 };
    try {
      await transactWrite(this.documents, [{ Put: { TableName: this.table, Item: this.item(job), ConditionExpression: 'attribute_not_exists(PK)' } }]);
      return { created: true, job };
    } catch (err) {
      if (!(err instanceof TransactionCancelledError) || !err.reasons[0]?.item) throw err;
      // The refused put answers with the job that holds the id: no second read.
      return { created: false, job: fromItem(err.reasons[0].item) };
    }
  }

  async get(jobId: string): Promise<ScanJob | undefined> {
    const { Item } = await this.documents.send(new GetCommand({ TableName: this.table, Key: jobKey(jobId), ConsistentRead: true }));
    return Item ? fromItem(Item) : undefined;
  }

  /**
   * Jobs in a state, oldest first. The index is eventually consistent, so it is
   * only a hint: each job is re-read and kept only if it is STILL in that state.
   */
  async inState(state: JobState | 'unpublished', limit = 100): Promise<ScanJob[]> {
    const keys = await queryAll(this.documents, { TableName: this.table, IndexName: STATE_INDEX, KeyConditionExpression: 'GSI1PK = :s', ExpressionAttributeValues: { ':s': `STATE#${state}` } }, limit);
    const jobs = await Promise.all(keys.map((k) => this.get((k.PK as string).slice('JOB#'.length))));
    const stillThere = (j: ScanJob) => (state === 'unpublished' ? j.state === 'finished' && !j.published : j.state === state);
    return jobs.filter((j): j is ScanJob => j !== undefined && stillThere(j));
  }

  /** queued → starting, taking a slot in the same transaction; false when no slot is free or another poller took it. */
  async start(job: ScanJob, now: number, maxInflight: number): Promise<ScanJob | undefined> {
    if (job.state !== 'queued') return undefined; // only a queued job may take a slot
    const next: ScanJob = { ...job, state: 'starting', started_at: now, revision: job.revision + 1 };
    try {
      await transactWrite(this.documents, [
        this.cas(job, next),
        {
          Update: {
            TableName: this.table,
            Key: SLOTS_KEY,
            UpdateExpression: 'ADD in_use :one',
            ConditionExpression: 'attribute_not_exists(in_use) OR in_use < :max',
            ExpressionAttributeValues: { ':one': 1, ':max': maxInflight },
          },
        },
      ]);
      return next;
    } catch (err) {
      if (err instanceof TransactionCancelledError) return undefined;
      throw err;
    }
  }

  async submitted(job: ScanJob, inboxName: string, deadline: number): Promise<ScanJob | undefined> {
    return this.transition(job, { ...job, state: 'submitted', inbox_name: inboxName, deadline });
  }

  async saveSettle(job: ScanJob, settle: SettleState): Promise<ScanJob | undefined> {
    return this.transition(job, { ...job, settle });
  }

  /**
   * → finished with its envelope stored (before publishing: a crash between the
   * two is re-published later), the slot released if the job held one, and the
   * publish lease taken by the caller. Undefined when another poller won.
   */
  async finish(job: ScanJob, result: Envelope, now: number): Promise<ScanJob | undefined> {
    const next: ScanJob = { ...job, state: 'finished', result, published: false, publish_lease: now + PUBLISH_LEASE_MS, revision: job.revision + 1 };
    const holdsSlot = job.state === 'starting' || job.state === 'submitted';
    try {
      await transactWrite(this.documents, [
        this.cas(job, next),
        ...(holdsSlot
          ? [
              {
                Update: {
                  TableName: this.table,
                  Key: SLOTS_KEY,
                  UpdateExpression: 'ADD in_use :minus',
                  ConditionExpression: 'in_use > :zero',
                  ExpressionAttributeValues: { ':minus': -1, ':zero': 0 },
                },
              },
            ]
          : []),
      ]);
      return next;
    } catch (err) {
      if (err instanceof TransactionCancelledError) return undefined;
      throw err;
    }
  }

  /** Takes the right to (re-)publish a stored result whose lease ran out. */
  async claimPublish(job: ScanJob, now: number): Promise<boolean> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: jobKey(job.job_id),
          UpdateExpression: 'SET publish_lease = :until',
          ConditionExpression: '#state = :finished AND published = :false AND (attribute_not_exists(publish_lease) OR publish_lease < :now)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':until': now + PUBLISH_LEASE_MS, ':finished': 'finished', ':false': false, ':now': now },
        }),
      );
      return true;
    } catch (err) {
      if ((err as Error).name === 'ConditionalCheckFailedException') return false;
      throw err;
    }
  }

  async markPublished(jobId: string, now: number): Promise<void> {
    await this.documents.send(
      new UpdateCommand({
        TableName: this.table,
        Key: jobKey(jobId),
        UpdateExpression: 'SET published = :true, expires_at = :exp REMOVE GSI1PK, GSI1SK',
        ExpressionAttributeValues: { ':true': true, ':exp': Math.floor(now / 1000) + RETENTION_S },
      }),
    );
  }

  async slotsInUse(): Promise<number> {
    const { Item } = await this.documents.send(new GetCommand({ TableName: this.table, Key: SLOTS_KEY, ConsistentRead: true }));
    return (Item?.in_use as number | undefined) ?? 0;
  }

  private async transition(job: ScanJob, next: ScanJob): Promise<ScanJob | undefined> {
    const written = { ...next, revision: job.revision + 1 };
    try {
      await transactWrite(this.documents, [this.cas(job, written)]);
      return written;
    } catch (err) {
      if (err instanceof TransactionCancelledError) return undefined;
      throw err;
    }
  }

  private cas(job: ScanJob, next: ScanJob): TransactItem {
    return {
      Put: {
        TableName: this.table,
        Item: this.item(next),
        ConditionExpression: '#state = :state AND revision = :rev',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':state': job.state, ':rev': job.revision },
      },
    };
  }

  private item(job: ScanJob): Record<string, unknown> {
    const indexed = job.state === 'finished' ? (job.published ? undefined : 'unpublished') : job.state;
    return { ...jobKey(job.job_id), entity: 'scan-job', ...job, ...(indexed ? stateIndexKeys(indexed, job.created_at, job.job_id) : {}) };
  }
}

function fromItem(item: Record<string, unknown>): ScanJob {
  const { PK: _pk, SK: _sk, GSI1PK: _g1, GSI1SK: _g2, entity: _e, expires_at: _x, ...job } = item;
  return job as unknown as ScanJob;
}

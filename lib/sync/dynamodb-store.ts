import { batchGetAll } from '../aws/batch';
import { isoTime, parseIsoTime } from '../clock';
import { conditionFailed } from '../aws/conditions';
import { queryAll, queryItems } from '../aws/query';
import { transactWrite, TransactItem } from '../aws/transact';
import { DynamoConnectionStore } from './dynamodb-connections';
import { StaleAttemptError } from './errors';
import {
  ATTEMPTS_INDEX,
  attemptItem,
  attemptKey,
  attemptPartition,
  connectionKey,
  DUE_INDEX,
  dueShardKey,
  dueShardOf,
  headFromItem,
  headItem,
  headKey,
  isConnectionItem,
  STEP_SORT_PREFIX,
  stepFromItem,
  stepItem,
  stepKey,
} from './keys';
import type { HourlyHead, Section, StepReport, StepRow, StepState } from './model';
import type { ConnectionStore, DueEntry, HourlyStore } from './store';

/**
 * The sync table on DynamoDB: conditions and transactions only (store.ts says
 * what each write guarantees). No branch is chosen here. This file holds the
 * hourly head, its attempt records and step rows; the connections (and the
 * helpers of every write) are dynamodb-connections.ts's, so one store object
 * built per table serves both interfaces.
 */
export class DynamoSyncStore extends DynamoConnectionStore implements HourlyStore, ConnectionStore {
  // --- the head, its attempts and their steps ---------------------------------

  async head(user: string): Promise<HourlyHead | undefined> {
    const item = await this.get(headKey(user));
    return item ? headFromItem(item) : undefined;
  }

  async attemptRecord(attemptId: string): Promise<HourlyHead | undefined> {
    const item = await this.get(attemptKey(attemptId));
    return item ? headFromItem(item) : undefined;
  }

  async attempts(user: string, limit: number): Promise<HourlyHead[]> {
    const items = await queryAll(
      this.deps.documents,
      {
        TableName: this.table,
        IndexName: ATTEMPTS_INDEX,
        KeyConditionExpression: 'attempt_user = :u',
        ExpressionAttributeValues: { ':u': user },
        ScanIndexForward: false,
      },
      limit,
    );
    return items.map(headFromItem);
  }

  async headsOf(users: string[]): Promise<HourlyHead[]> {
    const items = await batchGetAll(this.deps.documents, this.table, users.map(headKey));
    return items.map(headFromItem);
  }

  async stepRows(attemptId: string): Promise<StepRow[]> {
    const items = await queryAll(this.deps.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
      ExpressionAttributeValues: { ':p': attemptPartition(attemptId), ':s': STEP_SORT_PREFIX },
      ConsistentRead: true,
    });
    return items.map(stepFromItem);
  }

  async putFirstHead(head: HourlyHead): Promise<boolean> {
    return this.applied([
      { Put: { TableName: this.table, Item: headItem(head), ConditionExpression: 'attribute_not_exists(PK)' } },
      this.putRecord(head),
      {
        Update: {
          TableName: this.table,
          Key: connectionKey(head.user_id),
          UpdateExpression: 'REMOVE due_shard, due_at',
          ConditionExpression: 'attribute_exists(PK)',
        },
      },
    ]);
  }

  async replaceHead(
    expected: HourlyHead,
    next: HourlyHead,
    opts: { whileRunning: boolean; records: HourlyHead[]; rows?: StepRow[] },
  ): Promise<boolean> {
    const condition = `attempt_id = :a AND revision = :rev${opts.whileRunning ? ' AND #state = :running' : ''}`;
    return this.applied([
      ...(opts.rows ? this.pinRows(expected, opts.rows) : []),
      {
        Put: {
          TableName: this.table,
          Item: headItem(next),
          ConditionExpression: condition,
          ...(opts.whileRunning ? { ExpressionAttributeNames: { '#state': 'state' } } : {}),
          ExpressionAttributeValues: {
            ':a': expected.attempt_id,
            ':rev': expected.revision,
            ...(opts.whileRunning ? { ':running': 'running' } : {}),
          },
        },
      },
      ...opts.records.map((record) => this.putRecord(record)),
    ]);
  }

  async updateRunningHead(
    user: string,
    attemptId: string,
    change: { dispatched?: { section: Section; stepId: string }; walkCompleted?: true; dueAt?: number },
  ): Promise<void> {
    const set: string[] = [];
    const names: Record<string, string> = { '#state': 'state' };
    const values: Record<string, unknown> = { ':a': attemptId, ':running': 'running', ':one': 1 };
    if (change.dispatched) {
      set.push('children.#section = :step');
      names['#section'] = change.dispatched.section;
      values[':step'] = change.dispatched.stepId;
    }
    if (change.walkCompleted) {
      set.push('walk_completed = :t');
      values[':t'] = true;
    }
    if (change.dueAt !== undefined) {
      // The shard too: a head written before the index has none, and an entry needs both keys.
      set.push('due_at = :due', 'due_shard = :shard');
      values[':due'] = isoTime(change.dueAt);
      values[':shard'] = dueShardKey(dueShardOf(user));
    }
    try {
      // A transaction of one: transactWrite retries a conflict with the tick's or a step's transaction on the head.
      await transactWrite(this.deps.documents, [
        {
          Update: {
            TableName: this.table,
            Key: headKey(user),
            UpdateExpression: `SET ${set.join(', ')} ADD revision :one`,
            ConditionExpression: 'attempt_id = :a AND #state = :running',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          },
        },
      ]);
    } catch (err) {
      if (conditionFailed(err)) throw new StaleAttemptError(attemptId);
      throw err;
    }
  }

  async claimDispatch(user: string, attemptId: string, section: Section, stepId: string): Promise<boolean> {
    try {
      await transactWrite(this.deps.documents, [
        {
          Update: {
            TableName: this.table,
            Key: headKey(user),
            UpdateExpression: 'SET children.#section = :step ADD revision :one',
            ConditionExpression:
              'attempt_id = :a AND #state = :running AND walk_completed = :t AND attribute_not_exists(children.#section)',
            ExpressionAttributeNames: { '#state': 'state', '#section': section },
            ExpressionAttributeValues: {
              ':a': attemptId,
              ':running': 'running',
              ':t': true,
              ':step': stepId,
              ':one': 1,
            },
          },
        },
      ]);
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  async deferHead(user: string, revision: number, dueAt: number): Promise<boolean> {
    // The revision is not bumped: a CAS writer that read the head before this still wins, and it writes its own due_at.
    return this.updated({
      TableName: this.table,
      Key: headKey(user),
      UpdateExpression: 'SET due_at = :due, due_shard = :shard',
      ConditionExpression: 'revision = :rev',
      ExpressionAttributeValues: {
        ':due': isoTime(dueAt),
        ':shard': dueShardKey(dueShardOf(user)),
        ':rev': revision,
      },
    });
  }

  async startStep(user: string, row: StepRow): Promise<'started' | 'continued' | 'exists'> {
    const put = { TableName: this.table, Item: stepItem(row), ConditionExpression: 'attribute_not_exists(PK)' };
    if (await this.fenced(user, row.attempt_id, { Put: put })) return 'started';
    // The row exists: handed over to this step (its first delivery takes it), or a re-delivery.
    const taken = await this.fenced(user, row.attempt_id, {
      Update: {
        TableName: this.table,
        Key: stepKey(row.attempt_id, row.section),
        UpdateExpression: 'SET started_at = :at REMOVE awaiting_start',
        ConditionExpression: 'step_id = :sid AND #state = :running AND awaiting_start = :t',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: {
          ':at': isoTime(row.started_at),
          ':sid': row.step_id,
          ':running': 'running',
          ':t': true,
        },
      },
    });
    return taken ? 'continued' : 'exists';
  }

  async continueStep(
    user: string,
    row: Pick<StepRow, 'attempt_id' | 'section' | 'step_id'>,
    next: { step_id: string; resume: Record<string, string> },
  ): Promise<void> {
    const names = { '#state': 'state', '#section': row.section };
    try {
      await transactWrite(this.deps.documents, [
        {
          Update: {
            TableName: this.table,
            Key: headKey(user),
            UpdateExpression: 'SET children.#section = :next ADD revision :one',
            ConditionExpression: 'attempt_id = :a AND #state = :running AND children.#section = :sid',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: {
              ':a': row.attempt_id,
              ':running': 'running',
              ':sid': row.step_id,
              ':next': next.step_id,
              ':one': 1,
            },
          },
        },
        {
          Update: {
            TableName: this.table,
            Key: stepKey(row.attempt_id, row.section),
            UpdateExpression: 'SET step_id = :next, resume = :r, awaiting_start = :t ADD continuations :one',
            ConditionExpression: 'step_id = :sid AND #state = :running',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: {
              ':sid': row.step_id,
              ':running': 'running',
              ':next': next.step_id,
              ':r': next.resume,
              ':t': true,
              ':one': 1,
            },
          },
        },
      ]);
    } catch (err) {
      if (conditionFailed(err, 0) || conditionFailed(err, 1)) throw new StaleAttemptError(row.attempt_id);
      throw err;
    }
  }

  async finishStep(
    user: string,
    row: Pick<StepRow, 'attempt_id' | 'section' | 'step_id'>,
    finish: {
      state: Exclude<StepState, 'running'>;
      finished_at: number;
      error_code?: string;
      tracking_id?: string;
    } & StepReport,
  ): Promise<void> {
    // Named fields only, each set when present.
    const optional = {
      error_code: finish.error_code,
      tracking_id: finish.tracking_id,
      unknown_values: finish.unknown_values,
      unknown_names: finish.unknown_names,
      skipped_accounts: finish.skipped_accounts,
    };
    const present = Object.entries(optional).filter(([, v]) => v !== undefined);
    const set = ['#state = :s', 'finished_at = :f', ...present.map(([k]) => `${k} = :${k}`)];
    try {
      await transactWrite(this.deps.documents, [
        this.fence(user, row.attempt_id),
        {
          Update: {
            TableName: this.table,
            Key: stepKey(row.attempt_id, row.section),
            UpdateExpression: `SET ${set.join(', ')}`,
            ConditionExpression: 'step_id = :sid AND #state = :running',
            ExpressionAttributeNames: { '#state': 'state' },
            ExpressionAttributeValues: {
              ':s': finish.state,
              ':f': isoTime(finish.finished_at),
              ':sid': row.step_id,
              ':running': 'running',
              ...Object.fromEntries(present.map(([k, v]) => [`:${k}`, v])),
            },
          },
        },
      ]);
    } catch (err) {
      if (conditionFailed(err, 0)) throw new StaleAttemptError(row.attempt_id);
      throw err;
    }
  }

  async *dueEntries(shard: number, now: number, limit?: number): AsyncGenerator<DueEntry> {
    const items = queryItems(this.deps.documents, {
      TableName: this.table,
      IndexName: DUE_INDEX,
      KeyConditionExpression: 'due_shard = :s AND due_at <= :now',
      ExpressionAttributeValues: { ':s': dueShardKey(shard), ':now': isoTime(now) },
      // The base table's keys come with every index entry: a connection item's say "never attempted".
      ProjectionExpression: 'PK, user_id, due_at',
      ...(limit ? { Limit: limit } : {}),
    });
    let n = 0;
    for await (const item of items) {
      const dueAt = parseIsoTime(item.due_at);
      if (typeof item.user_id === 'string')
        yield { user_id: item.user_id, due_at: dueAt ?? 0, fresh: isConnectionItem(item) };
      if (limit && ++n >= limit) return;
    }
  }

  // --- helpers -------------------------------------------------------------------

  private putRecord(head: HourlyHead): TransactItem {
    return { Put: { TableName: this.table, Item: attemptItem(head) } };
  }

  /** The rows an outcome was derived from must be exactly as read when it is written. */
  private pinRows(head: HourlyHead, rows: StepRow[]): TransactItem[] {
    return Object.keys(head.children).map((section) => {
      const row = rows.find((r) => r.section === section);
      return {
        ConditionCheck: {
          TableName: this.table,
          Key: stepKey(head.attempt_id, section),
          ConditionExpression: row ? '#state = :seen' : 'attribute_not_exists(PK)',
          ...(row
            ? { ExpressionAttributeNames: { '#state': 'state' }, ExpressionAttributeValues: { ':seen': row.state } }
            : {}),
        },
      };
    });
  }

  /** `item` written under the attempt's fence: StaleAttemptError when the attempt moved on, false when `item`'s own condition failed. */
  private async fenced(user: string, attemptId: string, item: TransactItem): Promise<boolean> {
    try {
      await transactWrite(this.deps.documents, [this.fence(user, attemptId), item]);
      return true;
    } catch (err) {
      if (conditionFailed(err, 0)) throw new StaleAttemptError(attemptId);
      if (conditionFailed(err, 1)) return false;
      throw err;
    }
  }

  private fence(user: string, attemptId: string): TransactItem {
    return {
      ConditionCheck: {
        TableName: this.table,
        Key: headKey(user),
        ConditionExpression: 'attempt_id = :a',
        ExpressionAttributeValues: { ':a': attemptId },
      },
    };
  }
}

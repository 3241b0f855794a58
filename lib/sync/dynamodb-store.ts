import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailed } from '../aws/conditions';
import { queryAll, queryItems } from '../aws/query';
import { TransactionCancelledError, transactWrite, TransactItem } from '../aws/transact';
import { newId } from '../ident';
import type { SecretSealer } from '../secrets/sealer';
import { attemptKey, attemptPartition, connectionKey, headKey, stepKey } from './keys';
import { Connection, HOUR_MS, HourlyHead, Section, StepRow, StepState, SyncErrorCode } from './model';
import { StaleAttemptError } from './errors';
import { barrierReached, Derived, deriveOutcome, finishedBefore } from './outcome';

/**
 * Durable state of the hourly sync. The head item is the fence: every write of
 * an attempt is conditional on `attempt_id` (the fencing token) and, for the
 * head, on its `revision`. Nothing an invocation knows survives it in memory.
 */

export interface Run {
  run_id: string;
  /** Epoch ms: the invocation's hard end (start + Lambda timeout). */
  run_deadline: number;
}

export type Reservation =
  | { branch: 'first' | 'due'; head: HourlyHead; previous?: HourlyHead['state'] }
  | { branch: 'restart'; head?: HourlyHead; closed: Derived }
  | { branch: 'running' | 'not-due' | 'raced'; current?: HourlyHead };

export { StaleAttemptError };

export interface SyncStoreDeps {
  documents: DynamoDBDocumentClient;
  table: string;
  waitBoundMs: number;
  /** Seals brokerage tokens at rest; asked for only when a token is written or read. */
  sealer: () => SecretSealer;
}

// Binds a sealed token to its row: copied onto another user's connection, it does not open.
const tokenContext = (user: string) => `sync-connection:${user}`;

export class SyncStore {
  constructor(private readonly deps: SyncStoreDeps) {}

  private get table() {
    return this.deps.table;
  }

  // --- connections ---------------------------------------------------------

  async putConnection(user: string, token: string, now: Date): Promise<Connection> {
    const connection = { user_id: user, created_at: now.toISOString() };
    const sealed = this.deps.sealer().seal(token, tokenContext(user));
    await this.deps.documents.send(
      new PutCommand({ TableName: this.table, Item: { ...connectionKey(user), ...connection, token_sealed: sealed } }),
    );
    return connection;
  }

  /**
   * The stored token, for the tick and the steps only: no read API returns it.
   * A token sealed under an older key is re-sealed under the current one (a
   * conditional write, so a newer token is never overwritten): every
   * connection is read hourly, so a rotation completes within the hour.
   */
  async connectionToken(user: string): Promise<string | undefined> {
    const { Item } = await this.deps.documents.send(
      new GetCommand({ TableName: this.table, Key: connectionKey(user), ConsistentRead: true }),
    );
    const sealed = Item?.token_sealed as string | undefined;
    if (!sealed) return undefined;
    const sealer = this.deps.sealer();
    const token = sealer.open(sealed, tokenContext(user));
    if (sealer.isStale(sealed)) {
      await this.deps.documents
        .send(
          new UpdateCommand({
            TableName: this.table,
            Key: connectionKey(user),
            UpdateExpression: 'SET token_sealed = :new',
            ConditionExpression: 'token_sealed = :old',
            ExpressionAttributeValues: { ':new': sealer.seal(token, tokenContext(user)), ':old': sealed },
          }),
        )
        .catch((err: Error) => {
          if (!conditionFailed(err)) throw err;
        });
    }
    return token;
  }

  async *connections(): AsyncGenerator<Connection> {
    const items = queryItems(this.deps.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :p',
      ExpressionAttributeValues: { ':p': 'CONN' },
      ProjectionExpression: 'user_id, created_at',
    });
    for await (const item of items) yield { user_id: item.user_id as string, created_at: item.created_at as string };
  }

  // --- the head and its attempts ------------------------------------------

  async head(user: string): Promise<HourlyHead | undefined> {
    const { Item } = await this.deps.documents.send(
      new GetCommand({ TableName: this.table, Key: headKey(user), ConsistentRead: true }),
    );
    return Item ? (strip(Item) as unknown as HourlyHead) : undefined;
  }

  async attempt(attemptId: string): Promise<(HourlyHead & { rows: StepRow[] }) | undefined> {
    const { Item } = await this.deps.documents.send(
      new GetCommand({ TableName: this.table, Key: attemptKey(attemptId), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    // The record is rewritten at settle; while the attempt is current the head is fresher.
    const head = await this.head(Item.user_id as string);
    const current = head?.attempt_id === attemptId ? head : (strip(Item) as unknown as HourlyHead);
    return { ...current, rows: await this.stepRows(attemptId) };
  }

  async stepRows(attemptId: string): Promise<StepRow[]> {
    const items = await queryAll(this.deps.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
      ExpressionAttributeValues: { ':p': attemptPartition(attemptId), ':s': 'STEP#' },
      ConsistentRead: true,
    });
    return items.map((i) => strip(i) as unknown as StepRow);
  }

  /**
   * reserveHourly: the branches of the hourly design (lib/sync/README.md), each ONE conditional write.
   * first: no head yet. running: a live attempt (its run not over, or its walk
   * done and steps still within their wait): skip. restart: running but its run
   * is over mid-walk: close it INTERRUPTED in the same transaction, then the due
   * gate. succeeded/partial/failed: the due gate (an hour after the last start).
   */
  async reserveHourly(user: string, now: number, run: Run): Promise<Reservation> {
    const head = await this.head(user);
    const fresh = (): HourlyHead => ({
      user_id: user,
      attempt_id: newId(now),
      state: 'running',
      started_at: now,
      run_id: run.run_id,
      run_deadline: run.run_deadline,
      walk_completed: false,
      children: {},
      revision: (head?.revision ?? 0) + 1,
    });

    if (!head) {
      const next = fresh();
      return this.tryReserve([this.putHead(next, 'attribute_not_exists(PK)'), this.putAttempt(next)], {
        branch: 'first',
        head: next,
      });
    }
    const due = now >= head.started_at + HOUR_MS;
    if (head.state === 'running') {
      if (now < head.run_deadline || head.walk_completed) return { branch: 'running', current: head };
      const rows = await this.stepRows(head.attempt_id);
      const closed = deriveOutcome({ head, rows, cause: SyncErrorCode.INTERRUPTED });
      const closedHead = this.closedHead(head, closed, now);
      const next = due ? fresh() : undefined;
      const items = [
        ...this.pinRows(head, rows),
        this.putAttempt(closedHead),
        this.putHead(next ?? closedHead, 'attempt_id = :a AND #state = :running AND revision = :rev', head),
        ...(next ? [this.putAttempt(next)] : []),
      ];
      return this.tryReserve(items, { branch: 'restart', head: next, closed });
    }
    if (!due) return { branch: 'not-due', current: head };
    const next = fresh();
    return this.tryReserve([this.putHead(next, 'attempt_id = :a AND revision = :rev', head), this.putAttempt(next)], {
      branch: 'due',
      head: next,
      previous: head.state,
    });
  }

  /** Writes the step id onto the attempt right after dispatch, before any wait. */
  async recordDispatch(user: string, attemptId: string, section: Section, stepId: string): Promise<void> {
    await this.fencedHeadUpdate(
      user,
      attemptId,
      'SET children.#section = :step',
      { '#section': section },
      { ':step': stepId },
    );
  }

  async markWalkCompleted(user: string, attemptId: string): Promise<void> {
    await this.fencedHeadUpdate(user, attemptId, 'SET walk_completed = :t', {}, { ':t': true });
  }

  /**
   * settleHourly: derives the outcome from the rows it read and writes it in ONE
   * transaction that pins those rows (a row finishing meanwhile cancels it, and
   * we read again) — a CAS from `running` only.
   * Without a cause it waits for the terminal barrier ('waiting').
   * `lostIfFinishedBefore`: when every dispatched step finished before that
   * instant, the settle that should have followed was lost: cause INTERRUPTED.
   */
  async settleHourly(
    user: string,
    attemptId: string,
    now: number,
    opts: {
      cause?: typeof SyncErrorCode.INTERRUPTED | typeof SyncErrorCode.ACCESS_DENIED;
      lostIfFinishedBefore?: number;
    } = {},
  ): Promise<{ settled: Derived } | { skipped: 'not-running' | 'waiting' }> {
    for (let turn = 0; turn < 10; turn++) {
      const head = await this.head(user);
      if (!head || head.attempt_id !== attemptId || head.state !== 'running') return { skipped: 'not-running' };
      const rows = await this.stepRows(attemptId);
      const lost = opts.lostIfFinishedBefore !== undefined && finishedBefore(head, rows, opts.lostIfFinishedBefore);
      const cause = opts.cause ?? (lost ? SyncErrorCode.INTERRUPTED : undefined);
      if (!cause && !barrierReached(head, rows, now, this.deps.waitBoundMs)) return { skipped: 'waiting' };
      const settled = deriveOutcome({ head, rows, cause });
      const closed = this.closedHead(head, settled, now);
      try {
        await transactWrite(this.deps.documents, [
          ...this.pinRows(head, rows),
          this.putHead(closed, 'attempt_id = :a AND #state = :running AND revision = :rev', head),
          this.putAttempt(closed),
        ]);
        return { settled };
      } catch (err) {
        if (!(err instanceof TransactionCancelledError)) throw err;
      }
    }
    throw new Error(`settleHourly ${attemptId}: rows kept changing`);
  }

  // --- steps ----------------------------------------------------------------

  /** The step's `running` row; fenced: refused once a successor attempt exists. Idempotent for a re-delivered invocation. */
  async startStep(user: string, row: StepRow): Promise<'started' | 'exists'> {
    try {
      await transactWrite(this.deps.documents, [
        this.fence(user, row.attempt_id),
        {
          Put: {
            TableName: this.table,
            Item: { ...stepKey(row.attempt_id, row.section), ...row },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
      ]);
      return 'started';
    } catch (err) {
      if (err instanceof TransactionCancelledError && err.reasons[0]?.code === 'ConditionalCheckFailed')
        throw new StaleAttemptError(row.attempt_id);
      if (err instanceof TransactionCancelledError && err.reasons[1]?.code === 'ConditionalCheckFailed')
        return 'exists';
      throw err;
    }
  }

  /** The step's durable finish; fenced like its start. */
  async finishStep(
    user: string,
    row: Pick<StepRow, 'attempt_id' | 'section' | 'step_id'>,
    state: Exclude<StepState, 'running'>,
    now: number,
    errorCode?: string,
    trackingId?: string,
  ): Promise<void> {
    const set = [
      '#state = :s',
      'finished_at = :f',
      ...(errorCode ? ['error_code = :e'] : []),
      ...(trackingId ? ['tracking_id = :t'] : []),
    ];
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
              ':s': state,
              ':f': now,
              ':sid': row.step_id,
              ':running': 'running',
              ...(errorCode ? { ':e': errorCode } : {}),
              ...(trackingId ? { ':t': trackingId } : {}),
            },
          },
        },
      ]);
    } catch (err) {
      if (err instanceof TransactionCancelledError && err.reasons[0]?.code === 'ConditionalCheckFailed')
        throw new StaleAttemptError(row.attempt_id);
      throw err;
    }
  }

  // --- helpers ----------------------------------------------------------------

  private async tryReserve<T extends Reservation>(items: TransactItem[], result: T): Promise<T | Reservation> {
    try {
      await transactWrite(this.deps.documents, items);
      return result;
    } catch (err) {
      if (err instanceof TransactionCancelledError) return { branch: 'raced' };
      throw err;
    }
  }

  private closedHead(head: HourlyHead, outcome: Derived, now: number): HourlyHead {
    return {
      ...head,
      state: outcome.state,
      finished_at: now,
      error_code: outcome.error_code,
      sections: outcome.sections,
      revision: head.revision + 1,
    };
  }

  private putHead(head: HourlyHead, condition: string, expected?: HourlyHead): TransactItem {
    const values: Record<string, unknown> = {};
    if (condition.includes(':a')) values[':a'] = expected!.attempt_id;
    if (condition.includes(':rev')) values[':rev'] = expected!.revision;
    if (condition.includes(':running')) values[':running'] = 'running';
    return {
      Put: {
        TableName: this.table,
        Item: { ...headKey(head.user_id), entity: 'hourly', ...head },
        ConditionExpression: condition,
        ...(condition.includes('#state') ? { ExpressionAttributeNames: { '#state': 'state' } } : {}),
        ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
      },
    };
  }

  private putAttempt(head: HourlyHead): TransactItem {
    return { Put: { TableName: this.table, Item: { ...attemptKey(head.attempt_id), entity: 'attempt', ...head } } };
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

  private async fencedHeadUpdate(
    user: string,
    attemptId: string,
    update: string,
    names: Record<string, string>,
    values: Record<string, unknown>,
  ) {
    try {
      await transactWrite(this.deps.documents, [
        {
          Update: {
            TableName: this.table,
            Key: headKey(user),
            UpdateExpression: `${update} ADD revision :one`,
            ConditionExpression: 'attempt_id = :a AND #state = :running',
            ExpressionAttributeNames: { ...names, '#state': 'state' },
            ExpressionAttributeValues: { ...values, ':a': attemptId, ':running': 'running', ':one': 1 },
          },
        },
      ]);
    } catch (err) {
      if (err instanceof TransactionCancelledError) throw new StaleAttemptError(attemptId);
      throw err;
    }
  }
}

function strip(item: Record<string, unknown>): Record<string, unknown> {
  const { PK: _pk, SK: _sk, entity: _entity, ...rest } = item;
  return rest;
}

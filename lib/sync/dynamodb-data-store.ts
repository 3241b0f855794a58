import { BatchGetCommand, DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchWriteAll, deleteRequest, putRequest } from '../aws/batch';
import { conditionFailed } from '../aws/conditions';
import { setTimeout as sleep } from 'node:timers/promises';
import { queryAll } from '../aws/query';
import { transactWrite } from '../aws/transact';
import { TransactionCancelledError } from '../aws/errors';
import { newId } from '../ident';
import type { OperationWindow, SyncDataStore } from './data-store';
import type { RateUse } from './model';
import { DynamoPaceStore } from './dynamodb-pace';
import { purgeUserData } from './dynamodb-purge';
import type { PaceStore } from './pacer';
import {
  accountItem,
  eventsItem,
  headKey,
  instrumentItem,
  instrumentKey,
  opGenerationPartition,
  operationFromItem,
  operationItem,
  opWindowKey,
  opWindowPrefix,
  portfolioItem,
  portfolioPrefix,
  rateKey,
  ratePartition,
  rateWindowOf,
  seenKey,
  userPartition,
} from './keys';
import { StaleAttemptError } from './errors';
import type { Operation } from './tbank/contract';

/** The synced data on DynamoDB: thin, conditions and transactions only. */
export class DynamoSyncDataStore implements SyncDataStore {
  private readonly pace: DynamoPaceStore;
  constructor(
    private readonly deps: {
      documents: DynamoDBDocumentClient;
      table: string;
      hooks?: { beforeFlip?: () => Promise<void> };
    },
  ) {
    this.pace = new DynamoPaceStore(deps);
  }

  purgeUser: SyncDataStore['purgeUser'] = (user, bound) => purgeUserData(this.deps, user, bound);
  takePace: PaceStore['takePace'] = (...args) => this.pace.takePace(...args);
  pausePace: PaceStore['pausePace'] = (...args) => this.pace.pausePace(...args);
  pacePausedUntil: PaceStore['pacePausedUntil'] = (key) => this.pace.pacePausedUntil(key);
  paceQueuedMs: PaceStore['paceQueuedMs'] = (key, now) => this.pace.paceQueuedMs(key, now);

  private get table() {
    return this.deps.table;
  }

  async putAccounts(user: string, accounts: Parameters<SyncDataStore['putAccounts']>[1], now: number) {
    await this.batchPut(accounts.map((a) => accountItem(user, a, now)));
  }

  async putPortfolio(user: string, portfolio: Parameters<SyncDataStore['putPortfolio']>[1], now: number) {
    await this.deps.documents.send(
      new PutCommand({ TableName: this.table, Item: portfolioItem(user, portfolio, now) }),
    );
  }

  async putEvents(
    user: string,
    instrument: string,
    dividends: Parameters<SyncDataStore['putEvents']>[2],
    bondEvents: Parameters<SyncDataStore['putEvents']>[3],
    now: number,
  ) {
    await this.deps.documents.send(
      new PutCommand({ TableName: this.table, Item: eventsItem(user, instrument, dividends, bondEvents, now) }),
    );
  }

  async hasOperationWindow(user: string, account: string, month: string): Promise<boolean> {
    const { Item } = await this.deps.documents.send(
      new GetCommand({
        TableName: this.table,
        Key: opWindowKey(user, account, month),
        ConsistentRead: true,
        ProjectionExpression: 'PK',
      }),
    );
    return !!Item;
  }

  async lastOperationWindow(user: string, account: string): Promise<OperationWindow | undefined> {
    const [item] = await queryAll(
      this.deps.documents,
      {
        TableName: this.table,
        KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
        ExpressionAttributeValues: { ':p': userPartition(user), ':s': opWindowPrefix(account) },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      },
      1,
    );
    return item ? windowFromItem(item) : undefined;
  }

  async replaceOperationWindow(
    input: Parameters<SyncDataStore['replaceOperationWindow']>[0],
  ): Promise<OperationWindow> {
    const { user, account, month } = input;
    const key = opWindowKey(user, account, month);
    const { Item: current } = await this.deps.documents.send(
      new GetCommand({ TableName: this.table, Key: key, ConsistentRead: true }),
    );
    const generation = newId();
    // 1. The new generation, invisible until the pointer names it.
    await this.batchPut(input.operations.map((op, seq) => operationItem(user, month, generation, seq, op)));
    await this.deps.hooks?.beforeFlip?.();
    // 2. The flip: fenced by the attempt, and a CAS on the generation read (a concurrent replace wins or loses whole).
    const window: OperationWindow = {
      account_id: account,
      month,
      generation,
      synced_to: input.synced_to,
      count: input.operations.length,
    };
    try {
      await transactWrite(this.deps.documents, [
        {
          ConditionCheck: {
            TableName: this.table,
            Key: headKey(user),
            ConditionExpression: 'attempt_id = :a',
            ExpressionAttributeValues: { ':a': input.attempt_id },
          },
        },
        {
          Put: {
            TableName: this.table,
            // previous_generation: the one deleted below; a crash before that delete leaves it findable (the purge).
            Item: {
              ...window,
              entity: 'opwindow',
              user_id: user,
              ...(current ? { previous_generation: current.generation } : {}),
              ...key,
            },
            ConditionExpression: current ? 'generation = :g' : 'attribute_not_exists(PK)',
            ...(current ? { ExpressionAttributeValues: { ':g': current.generation } } : {}),
          },
        },
      ]);
    } catch (err) {
      await this.deleteGeneration(user, account, month, generation);
      if (err instanceof TransactionCancelledError && err.reasons[0]?.code === 'ConditionalCheckFailed')
        throw new StaleAttemptError(input.attempt_id);
      throw err;
    }
    // 3. The old generation is unreachable now; a crash here leaves garbage, never a wrong answer.
    if (current) await this.deleteGeneration(user, account, month, current.generation as string);
    return window;
  }

  async operations(user: string, from: string, to: string): Promise<Operation[]> {
    const windows = await queryAll(this.deps.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
      ExpressionAttributeValues: { ':p': userPartition(user), ':s': opWindowPrefix() },
      ConsistentRead: true,
    });
    const fromMonth = from.slice(0, 7);
    const toMonth = to.slice(0, 7);
    const out: Operation[] = [];
    for (const w of windows.map(windowFromItem)) {
      if (w.month < fromMonth || w.month > toMonth) continue;
      const items = await queryAll(this.deps.documents, {
        TableName: this.table,
        KeyConditionExpression: 'PK = :p AND SK BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':p': opGenerationPartition(user, w.account_id, w.month, w.generation),
          ':from': from,
          ':to': to,
        },
      });
      out.push(...items.filter((i) => (i.SK as string) < to).map(operationFromItem));
    }
    return out.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.account_id.localeCompare(b.account_id)));
  }

  async addSeenInstruments(user: string, uids: string[]) {
    if (uids.length === 0) return;
    await this.deps.documents.send(
      new UpdateCommand({
        TableName: this.table,
        Key: seenKey(user),
        UpdateExpression: 'ADD uids :u SET entity = :e',
        ExpressionAttributeValues: { ':u': new Set(uids), ':e': 'seen' },
      }),
    );
  }

  async seenInstruments(user: string): Promise<string[]> {
    const { Item } = await this.deps.documents.send(new GetCommand({ TableName: this.table, Key: seenKey(user) }));
    return Item?.uids instanceof Set ? [...(Item.uids as Set<string>)] : [];
  }

  async heldInstruments(user: string): Promise<string[]> {
    const items = await queryAll(this.deps.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
      ExpressionAttributeValues: { ':p': userPartition(user), ':s': portfolioPrefix },
    });
    return [
      ...new Set(
        items.flatMap((i) => ((i.positions as { instrument_uid: string }[]) ?? []).map((p) => p.instrument_uid)),
      ),
    ];
  }

  async catalogFetchedAt(uids: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (let i = 0; i < uids.length; i += 100) {
      let keys: Record<string, unknown>[] | undefined = uids.slice(i, i + 100).map(instrumentKey);
      for (let turn = 0; keys && keys.length > 0 && turn < 8; turn++) {
        const res: import('@aws-sdk/lib-dynamodb').BatchGetCommandOutput = await this.deps.documents.send(
          new BatchGetCommand({
            RequestItems: { [this.table]: { Keys: keys, ProjectionExpression: 'uid, fetched_at' } },
          }),
        );
        for (const item of res.Responses?.[this.table] ?? []) out.set(item.uid as string, item.fetched_at as number);
        keys = res.UnprocessedKeys?.[this.table]?.Keys;
        if (keys?.length) await sleep(20 * 2 ** turn);
      }
    }
    return out;
  }

  async putInstrument(instrument: Parameters<SyncDataStore['putInstrument']>[0], now: number) {
    await this.deps.documents.send(new PutCommand({ TableName: this.table, Item: instrumentItem(instrument, now) }));
  }

  async rateUse(user: string): Promise<RateUse[]> {
    const items = await queryAll(this.deps.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :p',
      ExpressionAttributeValues: { ':p': ratePartition(user) },
    });
    const out: RateUse[] = [];
    for (const item of items) {
      const w = rateWindowOf(String(item.SK));
      if (w && typeof item.calls === 'number') out.push({ ...w, calls: item.calls });
    }
    return out.sort((a, b) => b.window_start - a.window_start || a.service.localeCompare(b.service));
  }

  async takeRateSlot(
    user: string,
    service: string,
    windowStart: number,
    limit: number,
    expiresAt: number,
  ): Promise<boolean> {
    try {
      await this.deps.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: rateKey(user, service, windowStart),
          UpdateExpression: 'ADD calls :one SET expires_at = :exp, entity = :e',
          ConditionExpression: 'attribute_not_exists(calls) OR calls < :limit',
          ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':exp': Math.ceil(expiresAt / 1000), ':e': 'rate' },
        }),
      );
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  private async deleteGeneration(user: string, account: string, month: string, generation: string) {
    const items = await queryAll(this.deps.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :p',
      ExpressionAttributeValues: { ':p': opGenerationPartition(user, account, month, generation) },
      ProjectionExpression: 'PK, SK',
    });
    await this.batchWrite(items.map(deleteRequest));
  }

  private batchPut(items: Record<string, unknown>[]) {
    return this.batchWrite(items.map(putRequest));
  }

  private batchWrite(requests: Parameters<typeof batchWriteAll>[2]) {
    return batchWriteAll(this.deps.documents, this.table, requests);
  }
}

function windowFromItem(item: Record<string, unknown>): OperationWindow {
  return {
    account_id: item.account_id as string,
    month: item.month as string,
    generation: item.generation as string,
    synced_to: item.synced_to as number,
    count: item.count as number,
  };
}

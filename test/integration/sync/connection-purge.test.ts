import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { newId } from '../../../lib/ident';
import { deleteConnection } from '../../../lib/sync/connections';
import { DynamoSyncDataStore } from '../../../lib/sync/dynamodb-data-store';
import { DynamoFeedTokenStore } from '../../../lib/sync/dynamodb-feed-tokens';
import {
  feedTokenKey,
  opGenerationPartition,
  operationItem,
  opWindowKey,
  paceKey,
  ratePartition,
  userPartition,
} from '../../../lib/sync/keys';
import { tokenPace } from '../../../lib/sync/pacer';
import type { Operation } from '../../../lib/sync/tbank/contract';
import { isolatedTable, stackClients, stackSealer } from '../../support/stack';
import { syncServices } from '../../support/sync';

/**
 * DELETE /sync/connections/{user} takes the user's synced brokerage data with
 * the connection (lib/sync/dynamodb-purge.ts): on DynamoDB Local, a user with
 * accounts, a portfolio, events, seen instruments, an operation window
 * replaced twice (and the old generation's items a crashed cleanup left), rate
 * windows and pacing schedules; a second user and the shared catalog beside.
 * Each call is bounded; calls go on until nothing of the user's is left, and
 * the other user's data is untouched.
 */

const aws = stackClients();
let table: Awaited<ReturnType<typeof isolatedTable>>;

beforeAll(async () => {
  table = await isolatedTable(aws, 'SyncTable');
});
afterAll(async () => {
  await table?.drop();
  aws.dynamodb.destroy();
});

const op = (id: string, date: string): Operation => ({
  id,
  account_id: 'acc1',
  date,
  type: 'OPERATION_TYPE_BUY',
  state: 'OPERATION_STATE_EXECUTED',
});

async function userWithData(services: ReturnType<typeof syncServices>, data: DynamoSyncDataStore) {
  const now = Date.now();
  const user = newId();
  await services.connections.putConnection(user, `t.${user}`, now);
  const reserved = await services.hourly.reserveHourly(user, now, { run_id: newId(), run_deadline: now + 55_000 });
  const attempt = (reserved as { head: { attempt_id: string } }).head.attempt_id;
  await data.putAccounts(
    user,
    [{ id: 'acc1', type: 'ACCOUNT_TYPE_TINKOFF', name: 'a', status: 'ACCOUNT_STATUS_OPEN', access_level: 'x' }],
    now,
  );
  await data.putPortfolio(user, { account_id: 'acc1', positions: [] }, now);
  await data.putEvents(user, 'instr-1', [], [], now);
  await data.addSeenInstruments(user, ['instr-1', 'instr-2']);
  const ops = (n: number, tag: string) =>
    Array.from({ length: n }, (_, i) => op(`${tag}${i}`, `2026-11-0${1 + (i % 9)}T10:00:00Z`));
  const window = { user, attempt_id: attempt, account: 'acc1', month: '2026-11', synced_to: now };
  await data.replaceOperationWindow({ ...window, operations: ops(12, 'a') });
  await data.replaceOperationWindow({ ...window, operations: ops(15, 'b') });
  // The previous generation's cleanup, as if the step died before it: its items back in place.
  const { Item } = await aws.documents.send(
    new GetCommand({ TableName: table.name, Key: opWindowKey(user, 'acc1', '2026-11') }),
  );
  expect(Item?.previous_generation).toEqual(expect.any(String));
  for (const [seq, o] of ops(4, 'orphan').entries())
    await aws.documents.send(
      new PutCommand({
        TableName: table.name,
        Item: operationItem(user, '2026-11', Item!.previous_generation, seq, o),
      }),
    );
  await data.takeRateSlot(user, 'OperationsService', now - (now % 60_000), 100, Math.floor(now / 1000) + 3600);
  await aws.documents.send(
    new PutCommand({ TableName: table.name, Item: { ...paceKey(tokenPace(user, 'OperationsService')), tat: now } }),
  );
  // A calendar feed token: its listing and count in the user's partition, its lookup by hash outside it.
  const sha256 = createHash('sha256').update(`feed.${user}`).digest('hex');
  const feeds = new DynamoFeedTokenStore({ documents: aws.documents, table: table.name });
  expect(
    await feeds.create({ token_id: newId(), user_id: user, created_at: new Date(now).toISOString() }, sha256, 5),
  ).toBe(true);
  return { user, sha256, generations: [Item!.generation as string, Item!.previous_generation as string] };
}

async function count(pk: string): Promise<number> {
  const { Items = [] } = await aws.documents.send(
    new QueryCommand({
      TableName: table.name,
      KeyConditionExpression: 'PK = :p',
      ExpressionAttributeValues: { ':p': pk },
      ConsistentRead: true,
    }),
  );
  return Items.length;
}

async function itemsOf({ user, generations, sha256 }: { user: string; generations: string[]; sha256: string }) {
  const pace = await aws.documents.send(
    new GetCommand({ TableName: table.name, Key: paceKey(tokenPace(user, 'OperationsService')) }),
  );
  const feed = await aws.documents.send(new GetCommand({ TableName: table.name, Key: feedTokenKey(sha256) }));
  return {
    user: await count(userPartition(user)),
    generations: (
      await Promise.all(generations.map((g) => count(opGenerationPartition(user, 'acc1', '2026-11', g))))
    ).reduce((a, b) => a + b, 0),
    rate: await count(ratePartition(user)),
    pace: pace.Item ? 1 : 0,
    feed: feed.Item ? 1 : 0,
  };
}

/** The sync services and data store over the test's table. */
function purgeServices() {
  const services = syncServices({
    documents: aws.documents,
    table: table.name,
    waitBoundMs: 60_000,
    sealer: stackSealer(),
  });
  return { services, data: new DynamoSyncDataStore({ documents: aws.documents, table: table.name }) };
}

it('deletes every item of the user in bounded calls until none is left, and nothing of anyone else', async () => {
  const { services, data } = purgeServices();
  const gone = await userWithData(services, data);
  const kept = await userWithData(services, data);
  await data.putInstrument(
    { uid: 'instr-1', figi: 'F1', ticker: 'T', name: 'n', instrument_type: 'share' } as never,
    Date.now(),
  );
  const keptBefore = await itemsOf(kept);
  // accounts, portfolio, events, seen, the window, its head, a feed listing and count; 15 + 4 operations; a rate
  // window; a pacing schedule; the feed token's lookup.
  expect(await itemsOf(gone)).toEqual({ user: 8, generations: 19, rate: 1, pace: 1, feed: 1 });

  const deps = { connections: services.connections, hourly: services.hourly, data };
  const calls: Array<Awaited<ReturnType<typeof deleteConnection>>> = [];
  for (let i = 0; i < 20; i++) {
    const result = await deleteConnection(deps, gone.user, {
      maxItems: 7,
      deadline: Date.now() + 60_000,
      now: Date.now,
    });
    calls.push(result);
    if (result.purge.done) break;
  }
  // The first call removed the connection (an attempt was running: the caller is told to come back); the bound held.
  expect(calls[0]).toMatchObject({ removed: true, running: true, purge: { done: false } });
  expect(calls.slice(1).every((c) => !c.removed && !c.running)).toBe(true);
  expect(calls.length).toBeGreaterThan(3);
  for (const c of calls) expect(c.purge.deleted).toBeLessThanOrEqual(7);
  expect(calls.at(-1)!.purge.done).toBe(true);
  expect(calls.reduce((n, c) => n + c.purge.deleted, 0)).toBe(7 + 19 + 1 + 1);
  expect(await itemsOf(gone)).toEqual({ user: 0, generations: 0, rate: 0, pace: 0, feed: 0 });
  expect(await services.connections.hasToken(gone.user)).toBe(false);

  // Again: nothing to remove, nothing found (the handler's 404).
  expect(
    await deleteConnection(deps, gone.user, { maxItems: 7, deadline: Date.now() + 60_000, now: Date.now }),
  ).toEqual({ removed: false, running: false, purge: { deleted: 0, done: true } });
  // The other user and the shared catalog are as they were.
  expect(await itemsOf(kept)).toEqual(keptBefore);
  expect(await count('INSTR#instr-1')).toBe(1);
  expect(await services.connections.hasToken(kept.user)).toBe(true);
});

it('stops at its deadline with what it deleted so far, and the next call finishes', async () => {
  const { services, data } = purgeServices();
  const stored = await userWithData(services, data);
  const { user } = stored;
  const deps = { connections: services.connections, hourly: services.hourly, data };
  const late = await deleteConnection(deps, user, { maxItems: 10_000, deadline: Date.now() - 1, now: Date.now });
  expect(late).toMatchObject({ removed: true, purge: { done: false } });
  expect(late.purge.deleted).toBe(1);
  const rest = await deleteConnection(deps, user, { maxItems: 10_000, deadline: Date.now() + 60_000, now: Date.now });
  expect(rest.purge.done).toBe(true);
  expect(await itemsOf(stored)).toEqual({ user: 0, generations: 0, rate: 0, pace: 0, feed: 0 });
});

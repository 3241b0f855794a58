import type { ConnectionService } from '../../../lib/sync/connections';
import type { HourlyService } from '../../../lib/sync/service';
import { syncServices } from '../../support/sync';
import { BrokerageEmulator } from '../../../emulator/brokerage/emulator';
import { ACCOUNTS } from '../../../emulator/brokerage/dataset';
import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { DynamoSyncDataStore } from '../../../lib/sync/dynamodb-data-store';
import { DEFAULT_SECTION_SETTINGS } from '../../../lib/sync/sections';
import { runStep, StepDeps } from '../../../lib/sync/step';
import { isolatedTable, stackClients, stackSealer } from '../../support/stack';

/** Operations are stored by window, replaced whole: changed ids, crashes mid-replace, on DynamoDB Local. */
const aws = stackClients();
let table: { name: string; drop: () => Promise<void> };
let hourly: HourlyService;
let connections: ConnectionService;
let emulator: BrokerageEmulator;
let url: string;
beforeAll(async () => {
  table = await isolatedTable(aws, 'SyncTable');
  ({ hourly, connections } = syncServices({
    documents: aws.documents,
    table: table.name,
    waitBoundMs: 60_000,
    sealer: stackSealer(),
  }));
  emulator = new BrokerageEmulator();
  url = await emulator.listen();
});
afterAll(async () => {
  await emulator.close();
  await table.drop();
  aws.dynamodb.destroy();
});
afterEach(() => emulator.reset());

const ALL = ['1970-01-01T00:00:00.000Z', '9999-01-01T00:00:00.000Z'] as const;
const deps = (data: DynamoSyncDataStore, over: Partial<StepDeps> = {}): StepDeps => ({
  hourly,
  dispatch: async () => {}, // one section at a time: no second phase
  connections,
  data,
  tbank: { baseUrl: url, appName: 'window-test', rateWindowMs: 60_000, backoffMs: 5 },
  // Now is 2026-11-02: the first sync (2 days back) and every re-sync (its end minus the 3-day overlap) cover the same two windows, 2026-10 and 2026-11.
  settings: { ...DEFAULT_SECTION_SETTINGS, historyDays: 2 },
  timeoutMs: 30_000,
  now: () => Date.UTC(2026, 10, 2, 10),
  log: silentLogger,
  ...over,
});

async function attemptFor(user: string): Promise<string> {
  const r = await hourly.reserveHourly(user, Date.now(), { run_id: newId(), run_deadline: Date.now() + 55_000 });
  if (!('head' in r) || !r.head) throw new Error('no reservation');
  return r.head.attempt_id;
}

async function syncOperations(user: string, data: DynamoSyncDataStore, over: Partial<StepDeps> = {}) {
  // A fresh attempt per run: a step row exists once per (attempt, section).
  await hourly
    .settleHourly(user, (await hourly.head(user))?.attempt_id ?? '', Date.now(), { cause: 'INTERRUPTED' })
    .catch(() => undefined);
  const head = await hourly.head(user);
  if (head) {
    // Reserve the next hour by moving the head's start back: the due gate is an hour after the last start.
    await aws.documents.send(
      new (await import('@aws-sdk/lib-dynamodb')).UpdateCommand({
        TableName: table.name,
        Key: { PK: `USER#${user}`, SK: 'HOURLY' },
        UpdateExpression: 'SET started_at = :s',
        ExpressionAttributeValues: { ':s': 0 },
      }),
    );
  }
  const attempt = await attemptFor(user);
  return runStep(deps(data, over), { user_id: user, attempt_id: attempt, step_id: newId(), section: 'operations' });
}

async function connected(): Promise<string> {
  const user = newId();
  await connections.putConnection(user, `t.${user}`, Date.now());
  return user;
}

it('a re-run of the same windows with changed operation ids leaves the same set: no duplicates, no ghosts', async () => {
  const data = new DynamoSyncDataStore({ documents: aws.documents, table: table.name });
  const user = await connected();
  emulator.faults.changeIds = true;
  expect(await syncOperations(user, data)).toBe('succeeded');
  const first = await data.operations(user, ...ALL);
  expect(first.length).toBeGreaterThan(50);
  expect(await syncOperations(user, data)).toBe('succeeded');
  const second = await data.operations(user, ...ALL);
  // Same operations (by everything but the id), ids all changed, nothing left of the first read.
  const strip = (ops: typeof first) => ops.map(({ id: _id, ...rest }) => JSON.stringify(rest)).sort();
  expect(second.length).toBe(first.length);
  expect(strip(second)).toEqual(strip(first));
  const firstIds = new Set(first.map((o) => o.id));
  expect(second.filter((o) => firstIds.has(o.id))).toEqual([]);
  expect(new Set(second.map((o) => o.id)).size).toBe(second.length);
  expect(second.every((o) => o.account_id !== ACCOUNTS[2].id)).toBe(true); // the closed account is skipped
});

it('a crash between the new generation’s write and the pointer flip leaves the old set complete and readable', async () => {
  const user = await connected();
  const healthy = new DynamoSyncDataStore({ documents: aws.documents, table: table.name });
  expect(await syncOperations(user, healthy)).toBe('succeeded');
  const before = await healthy.operations(user, ...ALL);

  emulator.faults.changeIds = true;
  const crashing = new DynamoSyncDataStore({
    documents: aws.documents,
    table: table.name,
    hooks: { beforeFlip: () => Promise.reject(new Error('invocation died before the flip')) },
  });
  expect(await syncOperations(user, crashing)).toBe('failed');
  const after = await healthy.operations(user, ...ALL);
  expect(after).toEqual(before);
});

it('GET-side: from > to is refused before reading', async () => {
  const { parseOperationsQuery } = await import('../../../lib/sync/requests');
  expect(() => parseOperationsQuery({ from: '2026-11-05', to: '2026-11-01' })).toThrow('must not be after');
  expect(parseOperationsQuery({ from: '2026-11-01', to: '2026-11-01' })).toEqual({
    from: '2026-11-01T00:00:00.000Z',
    to: '2026-11-02T00:00:00.000Z',
  });
});

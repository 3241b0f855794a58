import { ACCOUNTS, LATER_OPERATION_TYPE, OPERATIONS } from '../../../emulator/brokerage/dataset';
import { BrokerageEmulator } from '../../../emulator/brokerage/emulator';
import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { DynamoSyncDataStore } from '../../../lib/sync/dynamodb-data-store';
import type { HourlyHead, Section, StepRow } from '../../../lib/sync/model';
import { DEFAULT_SECTION_SETTINGS } from '../../../lib/sync/sections';
import { Dispatch, runStep, StepInput } from '../../../lib/sync/step';
import { tickUser } from '../../../lib/sync/tick';
import { isolatedTable, stackClients, stackSealer } from '../../support/stack';
import { syncServices } from '../../support/sync';

/**
 * T-Bank as it really answers, through a whole attempt (DynamoDB Local, the
 * emulator, the real steps): operation types newer than the contract, accounts
 * the token may not read, a bank account among the brokerage ones, and a 40002
 * on one account.
 */
const aws = stackClients();
const WINDOW_MS = 1000;
let emulator: BrokerageEmulator;
let url: string;

beforeAll(async () => {
  emulator = new BrokerageEmulator({ windowMs: WINDOW_MS });
  url = await emulator.listen();
});
afterAll(async () => {
  await emulator.close();
  aws.dynamodb.destroy();
});
afterEach(() => emulator.reset());

const [brokerage, iis, closed, noAccess, debit] = ACCOUNTS;
const HISTORY_DAYS = 800; // back past the dataset's first operation: every operation is read

async function sync(): Promise<{
  head: HourlyHead;
  rows: Record<Section, StepRow>;
  data: DynamoSyncDataStore;
  user: string;
  drop: () => Promise<void>;
}> {
  const table = await isolatedTable(aws, 'SyncTable');
  const { hourly, connections } = syncServices({
    documents: aws.documents,
    table: table.name,
    waitBoundMs: 60_000,
    sealer: stackSealer(),
  });
  const data = new DynamoSyncDataStore({ documents: aws.documents, table: table.name });
  const user = newId();
  await connections.putConnection(user, `t.${user}`, Date.now());
  const running: Promise<unknown>[] = [];
  const dispatch: Dispatch = async (input: StepInput) => {
    running.push(
      runStep(
        {
          hourly,
          dispatch,
          connections,
          data,
          tbank: { baseUrl: url, appName: 'enums-test', rateWindowMs: WINDOW_MS, backoffMs: 5, rateLimitWaits: 3 },
          settings: { ...DEFAULT_SECTION_SETTINGS, historyDays: HISTORY_DAYS },
          timeoutMs: 25_000,
          now: Date.now,
          log: silentLogger,
        },
        input,
      ),
    );
  };
  const run = { run_id: newId(), run_deadline: Date.now() + 55_000 };
  expect(await tickUser({ hourly, connections, dispatch, now: Date.now, log: silentLogger, run }, user)).toBe('first');
  for (let n = -1; n !== running.length;) {
    n = running.length;
    await Promise.all(running);
  }
  const head = (await hourly.head(user))!;
  const rows = Object.fromEntries((await hourly.stepRows(head.attempt_id)).map((r) => [r.section, r])) as Record<
    Section,
    StepRow
  >;
  return { head, rows, data, user, drop: table.drop };
}

const accountCalls = (id: string) => emulator.accountCalls.get(id) ?? 0;

it('an operation type newer than the contract is stored raw and counted on the step row; the attempt succeeds', async () => {
  const { head, rows, data, user, drop } = await sync();
  try {
    expect(head).toMatchObject({ state: 'succeeded' });
    const later = OPERATIONS.filter((o) => o.type === LATER_OPERATION_TYPE);
    expect(later.length).toBeGreaterThan(5);
    const stored = await data.operations(user, '1970-01-01T00:00:00.000Z', '9999-01-01T00:00:00.000Z');
    expect(
      stored
        .filter((o) => o.type === LATER_OPERATION_TYPE)
        .map((o) => o.id)
        .sort(),
    ).toEqual(later.map((o) => o.id).sort());
    expect(rows.operations).toMatchObject({
      state: 'succeeded',
      unknown_values: later.length,
      unknown_names: [`type=${LATER_OPERATION_TYPE}`],
    });
    expect(rows.portfolio.unknown_values).toBeUndefined();
  } finally {
    await drop();
  }
});

it('NO_ACCESS and debit accounts are skipped and listed, never called; the brokerage ones are synced', async () => {
  const { head, rows, data, user, drop } = await sync();
  try {
    expect(head).toMatchObject({ state: 'succeeded' });
    const skipped = [
      { account_id: noAccess.id, reason: 'no-access' },
      { account_id: debit.id, reason: 'not-brokerage' },
    ];
    for (const section of ['portfolio', 'operations', 'events.refresh'] as const)
      expect(rows[section].skipped_accounts).toEqual(skipped);
    expect([accountCalls(noAccess.id), accountCalls(debit.id), accountCalls(closed.id)]).toEqual([0, 0, 0]);
    expect(accountCalls(brokerage.id)).toBeGreaterThan(0);
    expect(accountCalls(iis.id)).toBeGreaterThan(0);
    const accounts = new Set(
      (await data.operations(user, '1970-01-01T00:00:00.000Z', '9999-01-01T00:00:00.000Z')).map((o) => o.account_id),
    );
    expect(accounts).toEqual(new Set([brokerage.id, iis.id]));
  } finally {
    await drop();
  }
});

it('a 40002 on one account skips that account only; on every account it is INSUFFICIENT_RIGHTS', async () => {
  emulator.faults.denyAccounts = [iis.id];
  const one = await sync();
  try {
    expect(one.head).toMatchObject({ state: 'succeeded' });
    for (const section of ['portfolio', 'operations', 'events.refresh'] as const)
      expect(one.rows[section].skipped_accounts).toContainEqual({ account_id: iis.id, reason: 'forbidden' });
    const ops = await one.data.operations(one.user, '1970-01-01T00:00:00.000Z', '9999-01-01T00:00:00.000Z');
    expect(ops.length).toBe(OPERATIONS.filter((o) => o.brokerAccountId === brokerage.id).length);
  } finally {
    await one.drop();
  }

  emulator.faults.denyAccounts = [brokerage.id, iis.id];
  const all = await sync();
  try {
    expect(all.head).toMatchObject({ state: 'failed', error_code: 'INSUFFICIENT_RIGHTS' });
    expect(all.rows.portfolio).toMatchObject({ state: 'failed', error_code: 'INSUFFICIENT_RIGHTS' });
  } finally {
    await all.drop();
  }
});

it('50004 for one account, the code in `message`: that account is skipped, the section succeeds', async () => {
  emulator.faults = { 'OperationsService/GetPortfolio': { error: 50004, times: 1 } };
  const { head, rows, drop } = await sync();
  try {
    expect(emulator.wire.errorCodeIn).toBe('message');
    // portfolio and events.refresh both read portfolios, at once: one of them met the 50004.
    expect([rows.portfolio.state, rows['events.refresh'].state]).toEqual(['succeeded', 'succeeded']);
    expect([
      ...(rows.portfolio.skipped_accounts ?? []),
      ...(rows['events.refresh'].skipped_accounts ?? []),
    ]).toContainEqual({
      account_id: brokerage.id,
      reason: 'not-found',
    });
    expect(head).toMatchObject({ state: 'succeeded' });
  } finally {
    await drop();
  }
});

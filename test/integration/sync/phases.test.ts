import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { BrokerageEmulator } from '../../../emulator/brokerage/emulator';
import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import type { ConnectionService } from '../../../lib/sync/connections';
import { DynamoSyncDataStore } from '../../../lib/sync/dynamodb-data-store';
import { instrumentKey } from '../../../lib/sync/keys';
import type { HourlyHead } from '../../../lib/sync/model';
import { DEFAULT_SECTION_SETTINGS } from '../../../lib/sync/sections';
import type { HourlyService } from '../../../lib/sync/service';
import { Dispatch, runStep, StepInput } from '../../../lib/sync/step';
import { tickUser } from '../../../lib/sync/tick';
import { isolatedTable, stackClients, stackSealer } from '../../support/stack';
import { syncServices } from '../../support/sync';

/**
 * The attempt's two phases against DynamoDB Local and the T-Bank emulator:
 * catalog.enrichment runs after the sections that discover instruments, and a
 * section that could not start is never a success. Each test has a table of
 * its own: the catalog is shared by every user of a table, so a first sync
 * must find it empty.
 */
const aws = stackClients();
const WINDOW_MS = 1000; // the rate limits' "minute", emulator and client alike
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

async function firstSync(): Promise<{
  head: HourlyHead;
  data: DynamoSyncDataStore;
  user: string;
  table: string;
  drop: () => Promise<void>;
}> {
  const table = await isolatedTable(aws, 'SyncTable');
  const s = syncServices({ documents: aws.documents, table: table.name, waitBoundMs: 60_000, sealer: stackSealer() });
  const hourly: HourlyService = s.hourly;
  const connections: ConnectionService = s.connections;
  const data = new DynamoSyncDataStore({ documents: aws.documents, table: table.name });
  const user = newId();
  await connections.putConnection(user, `t.${user}`, Date.now());
  // Like an async Lambda invoke: each step runs on its own and may dispatch the next phase.
  const running: Promise<unknown>[] = [];
  const dispatch: Dispatch = async (input: StepInput) => {
    running.push(
      runStep(
        {
          hourly,
          dispatch,
          connections,
          data,
          tbank: { baseUrl: url, appName: 'phases-test', rateWindowMs: WINDOW_MS, backoffMs: 5, rateLimitWaits: 3 },
          settings: { ...DEFAULT_SECTION_SETTINGS, historyDays: 60 },
          timeoutMs: 20_000,
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
  return { head: (await hourly.head(user))!, data, user, table: table.name, drop: table.drop };
}

it('a first sync ends with every held and traded instrument in the catalog (name, type, currency), no 429', async () => {
  const { head, data, user, table, drop } = await firstSync();
  try {
    expect(head).toMatchObject({ state: 'succeeded' });
    const traded = (await data.operations(user, '1970-01-01T00:00:00.000Z', '9999-01-01T00:00:00.000Z'))
      .map((op) => op.instrument_uid)
      .filter((uid): uid is string => !!uid);
    const wanted = new Set([...traded, ...(await data.heldInstruments(user))]);
    expect(wanted.size).toBeGreaterThanOrEqual(5);
    for (const uid of wanted) {
      const { Item } = await aws.documents.send(new GetCommand({ TableName: table, Key: instrumentKey(uid) }));
      expect(Item).toMatchObject({ uid, name: expect.any(String), instrument_type: expect.any(String) });
      expect(Item!.currency).toMatch(/^[a-z]{3}$/);
    }
    expect(emulator.calls['InstrumentsService/GetInstrumentBy']).toBe(wanted.size);
    expect(emulator.rateLimited).toBe(0);
  } finally {
    await drop();
  }
});

it('every T-Bank call answering 500: the attempt is failed with the first section’s code; enrichment never ran', async () => {
  emulator.faults = { '*': { error: 70001 } };
  const { head, drop } = await firstSync();
  try {
    expect(head).toMatchObject({ state: 'failed', error_code: 'UPSTREAM_ERROR' });
    expect(head.sections!['catalog.enrichment']).toEqual({ state: 'failed', error_code: 'DEPENDENCY_FAILED' });
    expect(head.children['catalog.enrichment']).toBeUndefined();
    expect(emulator.calls['InstrumentsService/GetInstrumentBy']).toBeUndefined();
  } finally {
    await drop();
  }
});

it('a 429 storm on GetInstrumentBy alone: partial with RATE_LIMITED, the other sections and their data kept', async () => {
  emulator.faults = { 'InstrumentsService/GetInstrumentBy': { storm: true } };
  const { head, data, user, drop } = await firstSync();
  try {
    expect(head).toMatchObject({ state: 'partial', error_code: 'RATE_LIMITED' });
    expect(head.sections).toMatchObject({
      portfolio: { state: 'succeeded' },
      operations: { state: 'succeeded' },
      'events.refresh': { state: 'succeeded' },
      'catalog.enrichment': { state: 'failed', error_code: 'RATE_LIMITED' },
    });
    expect(
      (await data.operations(user, '1970-01-01T00:00:00.000Z', '9999-01-01T00:00:00.000Z')).length,
    ).toBeGreaterThan(0);
  } finally {
    await drop();
  }
});

it('racing finishers and ticks send the second phase once (the claim is one conditional write)', async () => {
  const table = await isolatedTable(aws, 'SyncTable');
  try {
    const { hourly, connections } = syncServices({
      documents: aws.documents,
      table: table.name,
      waitBoundMs: 60_000,
      sealer: stackSealer(),
    });
    const user = newId();
    const now = Date.now();
    await connections.putConnection(user, `t.${user}`, now);
    const sent: StepInput[] = [];
    const record: Dispatch = async (input) => void sent.push(input);
    const run = { run_id: newId(), run_deadline: now + 55_000 };
    expect(
      await tickUser({ hourly, connections, dispatch: record, now: () => now, log: silentLogger, run }, user),
    ).toBe('first');
    const head = (await hourly.head(user))!;
    for (const input of sent) {
      const row = { attempt_id: head.attempt_id, step_id: input.step_id, section: input.section };
      await hourly.startStep(user, { ...row, state: 'running', started_at: now });
      await hourly.finishStep(user, row, 'succeeded', now);
    }
    sent.length = 0;
    // Twelve finishers at once (the real race is two; a tick's visit joins it).
    const claims = await Promise.all(
      Array.from({ length: 12 }, () =>
        hourly.dispatchReady(user, head.attempt_id, now, async (section, stepId) =>
          record({ user_id: user, attempt_id: head.attempt_id, step_id: stepId, section }),
        ),
      ),
    );
    expect(claims.flat()).toEqual(['catalog.enrichment']);
    expect(sent.map((s) => s.section)).toEqual(['catalog.enrichment']);
    expect((await hourly.head(user))!.children['catalog.enrichment']).toBe(sent[0].step_id);
  } finally {
    await table.drop();
  }
});

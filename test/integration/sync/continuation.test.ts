import { BrokerageEmulator } from '../../../emulator/brokerage/emulator';
import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { DynamoSyncDataStore } from '../../../lib/sync/dynamodb-data-store';
import { DEFAULT_SECTION_SETTINGS, SECTION_RUNNERS, SectionRunner } from '../../../lib/sync/sections';
import { Dispatch, runStep, StepInput } from '../../../lib/sync/step';
import { tickUser } from '../../../lib/sync/tick';
import { isolatedTable, stackClients, stackSealer } from '../../support/stack';
import { syncServices } from '../../support/sync';

/**
 * A first sync whose operations section continues across steps (decision 326), on DynamoDB Local
 * with the T-Bank emulator and the real step code: each step hands over where it stopped, the
 * continuation takes the row once, and the attempt succeeds having stored exactly what one
 * uninterrupted step stores. Steps are queued as Lambda's async invocations would be.
 */
const aws = stackClients();
let emulator: BrokerageEmulator;
let url: string;

beforeAll(async () => {
  emulator = new BrokerageEmulator({ windowMs: 1000 });
  url = await emulator.listen();
});
afterAll(async () => {
  await emulator.close();
  aws.dynamodb.destroy();
});

/** The operations section handing over once its step has made `calls` Operations calls (a step near its bound). */
const handingOverAfter =
  (calls: number): SectionRunner =>
  (ctx) =>
    SECTION_RUNNERS.operations({
      ...ctx,
      handover: { ...ctx.handover!, due: () => (ctx.api.calls.OperationsService ?? 0) >= calls },
    });

async function firstSync(
  token: string,
  operations: SectionRunner,
  bounds: { waitBoundMs?: number; hourMs?: number } = {},
) {
  const table = await isolatedTable(aws, 'SyncTable');
  const { hourly, connections } = syncServices({
    documents: aws.documents,
    table: table.name,
    waitBoundMs: bounds.waitBoundMs ?? 15 * 60_000,
    hourMs: bounds.hourMs,
    sealer: stackSealer(),
  });
  const data = new DynamoSyncDataStore({ documents: aws.documents, table: table.name });
  const queued: StepInput[] = [];
  const dispatch: Dispatch = async (input) => void queued.push(input);
  const now = () => Date.now();
  const user = newId();
  await connections.putConnection(user, token, now());
  const run = { run_id: newId(), run_deadline: now() + 55_000 };
  expect(await tickUser({ hourly, connections, dispatch, now, log: silentLogger, run }, user)).toBe('first');
  const results: string[] = [];
  const resumes: Array<Record<string, string> | undefined> = [];
  try {
    for (let input = queued.shift(); input; input = queued.shift()) {
      const result = await runStep(
        {
          hourly,
          dispatch,
          connections,
          data,
          tbank: { baseUrl: url, appName: 'continuation-test', rateWindowMs: 1000 },
          settings: { ...DEFAULT_SECTION_SETTINGS, historyDays: 400 },
          timeoutMs: 20_000,
          now,
          log: silentLogger,
          runners: { ...SECTION_RUNNERS, operations },
        },
        input,
      );
      if (input.section === 'operations') {
        results.push(result);
        const rows = await hourly.stepRows(input.attempt_id);
        resumes.push(rows.find((r) => r.section === 'operations')?.resume);
      }
    }
    const stored = await data.operations(user, '1970-01-01', '9999-01-01');
    const rows = await hourly.stepRows((await hourly.head(user))!.attempt_id);
    return { head: await hourly.head(user), rows, results, resumes, ids: stored.map((o) => o.id).sort() };
  } finally {
    await table.drop();
  }
}

it('a first sync handed over twice stores exactly what one step stores, and the attempt succeeds', async () => {
  const token = `t.${newId()}`;
  const whole = await firstSync(token, SECTION_RUNNERS.operations);
  expect(whole.results).toEqual(['succeeded']);
  expect(whole.ids.length).toBeGreaterThan(0);

  // 14 month windows per account: each step reads up to 8 at once before its handover is due.
  const stepped = await firstSync(token, handingOverAfter(3));
  const continued = stepped.results.slice(0, -1);
  expect(continued.length).toBeGreaterThanOrEqual(2);
  expect(stepped.results).toEqual([...continued.map(() => 'continued'), 'succeeded']);
  // Each handover left a resume point on the row; the finished row keeps the last one.
  expect(stepped.resumes.every((r) => r && Object.keys(r).length > 0)).toBe(true);
  expect(stepped.head).toMatchObject({ state: 'succeeded' });
  expect(stepped.head?.error_code).toBeUndefined();
  expect(stepped.ids).toEqual(whole.ids);
});

it('each continuation has its own wait bound: a wait bound no longer than one step still hands over, and succeeds', async () => {
  // Before decision 364 the chain had to end within the attempt's start + the wait bound (20 s): DEADLINE.
  const carried = await firstSync(`t.${newId()}`, handingOverAfter(3), { waitBoundMs: 20_000 });
  expect(carried.results.slice(-1)).toEqual(['succeeded']);
  expect(carried.results.length).toBeGreaterThanOrEqual(3);
  expect(carried.head).toMatchObject({ state: 'succeeded' });
});

it('no handover whose step would end past the attempt’s hour: the section fails DEADLINE, the attempt is partial', async () => {
  const token = `t.${newId()}`;
  // The step's bound (20 s) does not fit the attempt's "hour" (20 s) from its start: the next attempt would wait behind it.
  const cut = await firstSync(token, handingOverAfter(3), { hourMs: 20_000 });
  expect(cut.results).toEqual(['failed']);
  expect(cut.rows.find((r) => r.section === 'operations')).toMatchObject({ state: 'failed', error_code: 'DEADLINE' });
  expect(cut.head).toMatchObject({ state: 'partial' });
});

import { BrokerageEmulator } from '../../../emulator/brokerage/emulator';
import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { DynamoSyncDataStore } from '../../../lib/sync/dynamodb-data-store';
import { DEFAULT_SECTION_SETTINGS } from '../../../lib/sync/sections';
import { Dispatch, runStep, StepInput } from '../../../lib/sync/step';
import { tickUser } from '../../../lib/sync/tick';
import { isolatedTable, stackClients, stackSealer } from '../../support/stack';
import { syncServices } from '../../support/sync';

/**
 * The wait bound is per step, from that step's dispatch, and DEADLINE is a
 * step's code ranked in section order (DynamoDB Local, the T-Bank emulator,
 * the real step code; the clock is injected so minutes pass at once). Steps
 * are queued as Lambda's async invocations would be and run when the test says.
 */
const aws = stackClients();
const MIN = 60_000;
const BOUND = 15 * MIN;
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
afterEach(() => emulator.reset());

async function attempt() {
  const table = await isolatedTable(aws, 'SyncTable');
  const { hourly, connections } = syncServices({
    documents: aws.documents,
    table: table.name,
    waitBoundMs: BOUND,
    sealer: stackSealer(),
  });
  const data = new DynamoSyncDataStore({ documents: aws.documents, table: table.name });
  let clock = Date.UTC(2026, 11, 4, 12, 0, 0);
  const now = () => clock;
  const queued = new Map<string, StepInput>();
  const dispatch: Dispatch = async (input) => void queued.set(input.section, input);
  const stepDeps = {
    hourly,
    dispatch,
    connections,
    data,
    tbank: { baseUrl: url, appName: 'bound-test', rateWindowMs: 1000, backoffMs: 5, rateLimitWaits: 3 },
    settings: { ...DEFAULT_SECTION_SETTINGS, historyDays: 40 },
    timeoutMs: 20_000,
    now,
    log: silentLogger,
  };
  const user = newId();
  await connections.putConnection(user, `t.${user}`, clock);
  const tick = () =>
    tickUser(
      { hourly, connections, dispatch, now, log: silentLogger, run: { run_id: newId(), run_deadline: clock + 55_000 } },
      user,
    );
  expect(await tick()).toBe('first');
  return {
    user,
    hourly,
    tick,
    at: (t: number) => (clock = t),
    start: clock,
    /** Runs the queued step of a section (Lambda picking the invocation up). */
    run: async (section: string, over: Partial<typeof stepDeps> = {}) => {
      const input = queued.get(section);
      if (!input) throw new Error(`${section} was not dispatched`);
      queued.delete(section);
      return runStep({ ...stepDeps, ...over }, input);
    },
    queued,
    drop: table.drop,
  };
}

it('a slow first phase: the enrichment is sent past start + bound, waited for its own bound, and succeeds', async () => {
  const a = await attempt();
  try {
    a.at(a.start + MIN);
    expect(await a.run('portfolio')).toBe('succeeded');
    expect(await a.run('events.refresh')).toBe('succeeded');
    a.at(a.start + 14 * MIN); // operations ends late, within its own bound: it sends the enrichment
    expect(await a.run('operations')).toBe('succeeded');
    expect(a.queued.has('catalog.enrichment')).toBe(true);

    // Past the attempt's start + bound: the enrichment's own bound runs to minute 29, so a visit waits.
    a.at(a.start + 16 * MIN);
    expect(await a.tick()).toBe('running');
    expect(await a.hourly.head(a.user)).toMatchObject({ state: 'running' });

    a.at(a.start + 17 * MIN);
    expect(await a.run('catalog.enrichment')).toBe('succeeded');
    expect(await a.hourly.head(a.user)).toMatchObject({ state: 'succeeded' });
  } finally {
    await a.drop();
  }
});

it('a finisher that died before sending the enrichment: a visit past start + bound still sends it', async () => {
  const a = await attempt();
  try {
    a.at(a.start + MIN);
    await a.run('portfolio');
    await a.run('events.refresh');
    a.at(a.start + 14 * MIN);
    // operations finishes, then its invocation dies before it claims the second phase.
    const dying = Object.assign(Object.create(a.hourly) as typeof a.hourly, { dispatchReady: async () => [] });
    expect(await a.run('operations', { hourly: dying })).toBe('succeeded');
    expect(a.queued.has('catalog.enrichment')).toBe(false);

    a.at(a.start + 16 * MIN); // its window runs a bound from operations' finish: minute 29
    expect(await a.tick()).toBe('running');
    expect(a.queued.has('catalog.enrichment')).toBe(true);
    a.at(a.start + 17 * MIN);
    expect(await a.run('catalog.enrichment')).toBe('succeeded');
    expect(await a.hourly.head(a.user)).toMatchObject({ state: 'succeeded' });
  } finally {
    await a.drop();
  }
});

it('TOKEN_INVALID on portfolio and a late operations step: the attempt reads TOKEN_INVALID, not DEADLINE', async () => {
  emulator.faults = { 'OperationsService/GetPortfolio': { error: 40003 } };
  const a = await attempt();
  try {
    a.at(a.start + MIN);
    expect(await a.run('portfolio')).toBe('failed');
    expect(await a.run('events.refresh')).toBe('failed');
    // operations hangs on T-Bank: its row stays running; its bound, from its dispatch, ends at minute 15.
    emulator.faults['OperationsService/GetOperationsByCursor'] = { hang: true };
    const late = a.run('operations', { timeoutMs: 3_000 });
    for (
      let i = 0;
      i < 100 &&
      !(await a.hourly.stepRows((await a.hourly.head(a.user))!.attempt_id)).some((r) => r.section === 'operations');
      i++
    )
      await new Promise((r) => setTimeout(r, 20));
    a.at(a.start + 14 * MIN);
    expect(await a.tick()).toBe('running');
    a.at(a.start + BOUND + 1);
    await a.tick();
    const settled = (await a.hourly.head(a.user))!;
    expect(settled).toMatchObject({ state: 'failed', error_code: 'TOKEN_INVALID' });
    expect(settled.sections).toMatchObject({
      portfolio: { state: 'failed', error_code: 'TOKEN_INVALID' },
      operations: { state: 'expired' },
    });
    await late; // its own bound ends it; its late row flips nothing
    expect(await a.hourly.head(a.user)).toMatchObject({ state: 'failed', error_code: 'TOKEN_INVALID' });
  } finally {
    await a.drop();
  }
});

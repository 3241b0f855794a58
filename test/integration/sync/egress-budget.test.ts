import { BrokerageEmulator } from '../../../emulator/brokerage/emulator';
import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { DynamoSyncDataStore } from '../../../lib/sync/dynamodb-data-store';
import { DEFAULT_SECTION_SETTINGS } from '../../../lib/sync/sections';
import { Dispatch, runStep, StepInput } from '../../../lib/sync/step';
import { tick } from '../../../lib/sync/tick';
import { isolatedTable, stackClients, stackSealer } from '../../support/stack';
import { syncServices } from '../../support/sync';

/**
 * The egress addresses' budget, shared by every token (DynamoDB Local, the
 * T-Bank emulator holding a per-address limit, the real steps and tick): the
 * calls of many users never exceed it, and the tick starts no more attempts
 * than it allows, deferring the rest in due order.
 */
const aws = stackClients();
// A scaled "minute" long enough that a call taking its slot at a window's end lands in it (the latency is real).
const WINDOW_MS = 5000;
// limits.md's per-address limits, scaled down so that a few users' syncs meet them within a test.
const LIMITS = { perMinute: 60, perSecond: 20 };
// What the client is told: the same minute, and a scaled "second" (83 ms) with room for the arrival skew of
// requests sent by this same process (a loaded event loop delays one send by tens of ms, bunching two "seconds"'
// worth at the emulator); at the real scale that skew is a few per cent of a second, within egressLimits' headroom.
const CLIENT_LIMITS = { perMinute: LIMITS.perMinute, perSecond: 15 };
let emulator: BrokerageEmulator;
let url: string;

beforeAll(async () => {
  emulator = new BrokerageEmulator({ windowMs: WINDOW_MS, addressLimits: LIMITS });
  url = await emulator.listen();
});
afterAll(async () => {
  await emulator.close();
  aws.dynamodb.destroy();
});
afterEach(() => emulator.reset());

async function setup() {
  const table = await isolatedTable(aws, 'SyncTable');
  const { hourly, connections } = syncServices({
    documents: aws.documents,
    table: table.name,
    waitBoundMs: 120_000,
    sealer: stackSealer(),
  });
  const data = new DynamoSyncDataStore({ documents: aws.documents, table: table.name });
  const running: Promise<unknown>[] = [];
  const sent: StepInput[] = [];
  const dispatch: Dispatch = async (input) => {
    sent.push(input);
    running.push(
      runStep(
        {
          hourly,
          dispatch,
          connections,
          data,
          tbank: {
            baseUrl: url,
            appName: 'egress-test',
            rateWindowMs: WINDOW_MS,
            egressAddresses: 1,
            addressLimits: CLIENT_LIMITS,
            backoffMs: 5,
          },
          settings: { ...DEFAULT_SECTION_SETTINGS, historyDays: 40 },
          timeoutMs: 60_000,
          now: Date.now,
          log: silentLogger,
        },
        input,
      ),
    );
  };
  const settle = async () => {
    for (let n = -1; n !== running.length;) {
      n = running.length;
      await Promise.all(running);
    }
  };
  return { hourly, connections, dispatch, sent, settle, drop: table.drop };
}

it('many users at once: the address never sees more than its limit, no 429, every attempt succeeds', async () => {
  const s = await setup();
  try {
    const users = Array.from({ length: 6 }, () => newId());
    for (const user of users) await s.connections.putConnection(user, `t.${user}`, Date.now());
    const run = { run_id: newId(), run_deadline: Date.now() + 55_000 };
    const counts = await tick({ ...s, now: Date.now, log: silentLogger, run });
    expect(counts.first).toBe(users.length);
    await s.settle();
    for (const user of users) expect(await s.hourly.head(user)).toMatchObject({ state: 'succeeded' });
    const calls = Object.values(emulator.calls).reduce((a, b) => a + b, 0);
    expect(calls).toBeGreaterThan(2 * LIMITS.perMinute); // the budget had to pace them over several windows
    const [address] = [...emulator.addresses.values()];
    expect(address.limited).toBe(0);
    expect(address.peakMinute).toBeLessThanOrEqual(LIMITS.perMinute);
    expect(address.peakSecond).toBeLessThanOrEqual(LIMITS.perSecond);
  } finally {
    await s.drop();
  }
}, 120_000);

// Two attempts a tick: each costs one call of a two-call budget, dispatched at once.
const ADMIT_TWO = { calls: 2, hourlyCost: 1, firstCost: 1, firstShare: 1, msPerCall: 0 };

it('the tick starts at most `admit` attempts; the rest are deferred in due order, counted, and taken first next', async () => {
  const s = await setup();
  try {
    const t0 = Date.now() - 10 * 60_000;
    // Five users due one minute apart: the oldest due first.
    const users = Array.from({ length: 5 }, () => newId());
    for (const [i, user] of users.entries()) await s.connections.putConnection(user, `t.${user}`, t0 + i * 60_000);
    const run = () => ({ run_id: newId(), run_deadline: Date.now() + 55_000 });

    const first = await tick({ ...s, admit: ADMIT_TWO, now: Date.now, log: silentLogger, run: run() });
    expect(first).toMatchObject({ first: 2, deferred: 3 });
    expect(new Set(s.sent.map((x) => x.user_id))).toEqual(new Set(users.slice(0, 2)));
    for (const user of users.slice(2)) expect(await s.hourly.head(user)).toBeUndefined(); // nothing written
    await s.settle();

    const second = await tick({ ...s, admit: ADMIT_TWO, now: Date.now, log: silentLogger, run: run() });
    expect(second).toMatchObject({ first: 2, deferred: 1 });
    expect(new Set(s.sent.map((x) => x.user_id))).toEqual(new Set(users.slice(0, 4)));
    await s.settle();
    // The deferred users made no T-Bank call: only the admitted ones' tokens were seen.
    expect(await s.hourly.head(users[4])).toBeUndefined();
  } finally {
    await s.drop();
  }
}, 120_000);

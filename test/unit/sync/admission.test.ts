import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../../lib/secrets/sealer';
import { Admission } from '../../../lib/sync/admission';
import { ConnectionService } from '../../../lib/sync/connections';
import { HourlyHead, type Section } from '../../../lib/sync/model';
import { HourlyService } from '../../../lib/sync/service';
import { tick, tickUser, type TickDeps } from '../../../lib/sync/tick';
import { policy } from './admit-policy';
import { MemorySyncStore } from './memory-sync-store';

/**
 * The tick's admission (admission.ts) over an in-memory store: attempts are admitted by their real
 * cost (a first sync's, from the connection's history, or an hourly one's), first syncs within their
 * share, the rest deferred in due order with the reason counted, and dispatches spread at the pace.
 */
const keyring = new SecretSealer(parseKeyring(newKeyringEntry('unit')).keyring!);
const T0 = Date.UTC(2026, 11, 6, 9, 0, 0);
const HOUR = 3_600_000;

function setup(hourMs?: number) {
  const store = new MemorySyncStore();
  const hourly = new HourlyService({ store, waitBoundMs: 15 * 60_000, hourMs });
  const connections = new ConnectionService({ store, sealer: async () => keyring });
  let clock = T0;
  const dispatched: { user: string; at: number }[] = [];
  const waits: number[] = [];
  const deps = (over: Partial<TickDeps> = {}): TickDeps => ({
    hourly,
    connections,
    dispatch: async (input) => void dispatched.push({ user: input.user_id, at: clock }),
    now: () => clock,
    log: silentLogger,
    run: { run_id: newId(), run_deadline: clock + 55_000 },
    // A spread dispatch's wait, recorded.
    sleep: async (ms) => void waits.push(ms),
    ...over,
  });
  /** A connection synced before (its operations succeeded), due `ago` ms ago. */
  const synced = async (ago: number) => {
    const user = newId();
    await connections.putConnection(user, 'tok', clock - HOUR);
    store.conns.get(user)!.due_at = undefined;
    const head: HourlyHead = {
      user_id: user,
      attempt_id: newId(clock - HOUR - ago),
      state: 'succeeded',
      started_at: clock - HOUR - ago,
      run_id: 'r',
      run_deadline: 0,
      walk_completed: true,
      children: {},
      sections: { operations: { state: 'succeeded' } },
      revision: 1,
      due_at: clock - ago,
    };
    store.heads.set(user, head);
    return user;
  };
  /** A new connection, due `ago` ms ago (its first sync). */
  const fresh = async (ago: number) => {
    const user = newId();
    await connections.putConnection(user, 'tok', clock - ago);
    return user;
  };
  return { store, hourly, connections, deps, dispatched, waits, synced, fresh, at: (ms: number) => (clock = ms) };
}

describe('admission by real cost', () => {
  it('first syncs take their real cost within their share; the hourly ones behind them still start', async () => {
    const s = setup();
    // Four new connections due first, then three synced ones.
    const news = [await s.fresh(50_000), await s.fresh(40_000), await s.fresh(30_000), await s.fresh(20_000)];
    const olds = [await s.synced(10_000), await s.synced(9_000), await s.synced(8_000)];
    const counts = await tick(s.deps({ admit: policy({}) }));
    // 100 calls, first syncs 50 of them: one first sync (40), the three hourly ones (30).
    expect(counts).toMatchObject({ first: 1, due: 3, deferred: 3, deferred_first_share: 3 });
    expect(new Set(s.dispatched.map((d) => d.user))).toEqual(new Set([news[0], ...olds]));
    for (const user of news.slice(1)) expect(await s.hourly.head(user)).toBeUndefined(); // left due, nothing written

    // The next minute the next first sync in due order.
    s.at(T0 + 60_000);
    s.dispatched.length = 0;
    expect(await tick(s.deps({ admit: policy({}) }))).toMatchObject({ first: 1, deferred_first_share: 2 });
    expect(new Set(s.dispatched.map((d) => d.user))).toEqual(new Set([news[1]]));
  });

  it('the budget counts a first sync at its cost: fewer attempts start than the hourly cost would allow', async () => {
    const s = setup();
    await s.fresh(50_000);
    for (let i = 0; i < 6; i++) await s.synced(10_000 - i);
    const counts = await tick(s.deps({ admit: policy({ calls: 60, firstShare: 1 }) }));
    // 40 for the first sync, then two hourly ones (20): the rest wait for the budget.
    expect(counts).toMatchObject({ first: 1, due: 2, deferred: 4, deferred_budget: 4 });
  });

  it('dispatches are spread at the pace of the calls admitted before them', async () => {
    const s = setup();
    await s.fresh(50_000);
    await s.synced(10_000);
    await s.synced(9_000);
    await tick(s.deps({ admit: policy({ msPerCall: 100 }) }));
    // The first sync at once; the hourly ones 40 × 100 ms after it, then 10 × 100 ms later.
    expect(s.waits.sort((a, b) => a - b)).toEqual([4000, 5000]);
    expect(new Set(s.dispatched.map((d) => d.user)).size).toBe(3);
  });

  it('calls already queued on the egress schedule come off the tick’s budget', async () => {
    const s = setup();
    for (let i = 0; i < 12; i++) await s.synced(10_000 - i);
    // 3 s queued at 100 ms a call: 30 of the 100 calls are spoken for.
    const counts = await tick(s.deps({ admit: policy({ msPerCall: 100 }), queuedMs: async () => 3000 }));
    expect(counts).toMatchObject({ due: 7, deferred: 5, deferred_budget: 5 });
  });

  it('a connection whose last attempt did not get its operations is still a first sync', async () => {
    const s = setup();
    const user = await s.synced(1000);
    s.store.heads.get(user)!.sections = { operations: { state: 'failed' } };
    const admission = new Admission(policy({ calls: 30, firstShare: 1 }), 30);
    const ticket = admission.take()!;
    expect(await tickUser(s.deps(), user, { admission, ticket })).toBe('deferred_budget');
    expect(await s.hourly.head(user)).toMatchObject({ state: 'succeeded' }); // untouched, still due
  });
});

describe('SYNC_HOUR_MS: a shortened sync hour', () => {
  it('decides due-ness, the due entry and the admission alike', async () => {
    const SHORT = 120_000;
    const s = setup(SHORT);
    const user = await s.fresh(0);
    expect(await tickUser(s.deps(), user)).toBe('first');
    // Its steps finish (the second phase too, once the first has), then it settles.
    const { attempt_id } = (await s.hourly.head(user))!;
    const done = new Set<string>();
    for (let sent = true; sent;) {
      for (const [section, stepId] of Object.entries((await s.hourly.head(user))!.children)) {
        if (done.has(stepId)) continue;
        done.add(stepId);
        const row = { attempt_id, step_id: stepId, section: section as Section };
        await s.hourly.startStep(user, { ...row, state: 'running', started_at: T0 });
        await s.hourly.finishStep(user, row, 'succeeded', T0 + 1000);
      }
      sent = (await s.hourly.dispatchReady(user, attempt_id, T0 + 1000, async () => {})).length > 0;
    }
    expect(await s.hourly.settleHourly(user, attempt_id, T0 + 1000)).toMatchObject({ settled: { state: 'succeeded' } });
    expect((await s.hourly.head(user))!.due_at).toBe(T0 + SHORT);
    s.at(T0 + SHORT - 1);
    expect(await tickUser(s.deps(), user)).toBe('not-due');
    s.at(T0 + SHORT);
    // One hourly sync's calls left: the due visit keeps them (a real hour would give them back as not due).
    const admission = new Admission(undefined, 1);
    const ticket = admission.take()!;
    expect(await tickUser(s.deps(), user, { admission, ticket })).toBe('due');
    expect(admission.exhausted).toBe(true);
  });
});

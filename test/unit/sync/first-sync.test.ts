import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../../lib/secrets/sealer';
import { Admission, firstCallsOfMinute, isFirstSync } from '../../../lib/sync/admission';
import { ConnectionService } from '../../../lib/sync/connections';
import type { HourlyHead } from '../../../lib/sync/model';
import { HourlyService } from '../../../lib/sync/service';
import { stepBoundMs } from '../../../lib/sync/step';
import { newStepId } from '../../../lib/sync/outcome';
import { tick, type TickDeps } from '../../../lib/sync/tick';
import { queuedView } from '../../../lib/sync/views';
import { HOUR, MINUTE, minutes, startSyncSim } from '../../support/sync-sim';
import { policy } from './admit-policy';
import { MemorySyncStore } from './memory-sync-store';

/**
 * Time to first sync (issue 49, decisions 362–364): each cause of new connections starving, and
 * the promise end to end on one virtual clock against the T-Bank emulator's sliding limits.
 */

const keyring = new SecretSealer(parseKeyring(newKeyringEntry('unit')).keyring!);
const T0 = Date.UTC(2026, 11, 7, 9, 0, 0);

function setup(store = new MemorySyncStore()) {
  const hourly = new HourlyService({ store, waitBoundMs: 15 * MINUTE });
  const connections = new ConnectionService({ store, sealer: async () => keyring });
  const started: string[] = [];
  const deps = (over: Partial<TickDeps> = {}): TickDeps => ({
    hourly,
    connections,
    dispatch: async (input) => {
      if (input.section === 'portfolio') started.push(input.user_id);
    },
    now: () => T0,
    log: silentLogger,
    run: { run_id: newId(), run_deadline: T0 + 55_000 },
    sleep: async () => {},
    ...over,
  });
  return { store, hourly, connections, deps, started };
}

describe('the causes, one by one', () => {
  it('admission decides in due order, whichever head read comes back first', async () => {
    // The oldest connection's head read is the slowest: before, the later ones took the share.
    class SlowFirst extends MemorySyncStore {
      slow = '';
      override async head(user: string) {
        if (user === this.slow) await new Promise((r) => setTimeout(r, 30));
        return super.head(user);
      }
    }
    const store = new SlowFirst();
    const s = setup(store);
    const users: string[] = [];
    for (let i = 0; i < 6; i++) {
      const user = newId(T0 - 10_000 + i);
      await s.connections.putConnection(user, 'tok', T0 - 10_000 + i);
      users.push(user);
    }
    store.slow = users[0];
    // Two first syncs fit (calls 160, share 0.5 → 80 = 2 × 40).
    const counts = await tick(s.deps({ admit: policy({ calls: 160 }) }));
    expect(counts).toMatchObject({ first: 2, deferred_first_share: 4 });
    expect(s.started.sort()).toEqual(users.slice(0, 2).sort());
  });

  it('past INLINE_MAX due entries, the shards get first syncs at their cost (they got none)', async () => {
    const s = setup();
    const users: string[] = [];
    for (let i = 0; i < 12; i++) {
      const user = newId(T0 - 10_000 + i);
      await s.connections.putConnection(user, 'tok', T0 - 10_000 + i);
      users.push(user);
    }
    // 12 due, 5 visited inline at most: the tick walks the shards, each with its planned quotas.
    const counts = await tick(s.deps({ admit: policy({ calls: 160 }), inlineMax: 5 }));
    expect(counts.first).toBe(2);
    expect(s.started.sort()).toEqual(users.slice(0, 2).sort());
  });

  it("the first syncs' share keeps its fraction across minutes: 474.5 calls / 150 a sync is 3.16 a minute", () => {
    const defaults = policy({ calls: 949, hourlyCost: 25, firstCost: 150 });
    const hour = Array.from({ length: 60 }, (_, i) => firstCallsOfMinute(defaults, 29_000_000 + i) / 150);
    expect(hour.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(189); // floor(60 × 3.163); 180 rounded per tick
    expect(new Set(hour)).toEqual(new Set([3, 4]));
    // Never more than the share (plus one sync's rounding) in any minute.
    for (const n of hour) expect(n * 150).toBeLessThanOrEqual(474.5 + 150);
  });

  it('a connection whose token T-Bank refused is charged as hourly, not as a first sync', () => {
    const last = (code: string): HourlyHead =>
      ({ sections: { operations: { state: 'failed', error_code: code } } }) as unknown as HourlyHead;
    expect(isFirstSync(undefined)).toBe(true);
    expect(isFirstSync(last('RATE_LIMITED'))).toBe(true); // its history is still to read
    expect(isFirstSync(last('DEADLINE'))).toBe(true);
    for (const code of ['TOKEN_INVALID', 'INSUFFICIENT_RIGHTS', 'UNAUTHORIZED'])
      expect(isFirstSync(last(code))).toBe(false);
    expect(isFirstSync({ error_code: 'ACCESS_DENIED' } as HourlyHead)).toBe(false); // no token at all
  });

  it('a connection given a new token is due at the next tick, not an hour after its last attempt', async () => {
    const s = setup();
    const user = newId(T0 - 60_000);
    await s.connections.putConnection(user, 'bad', T0 - 60_000);
    s.store.conns.get(user)!.due_at = undefined;
    s.store.heads.set(user, {
      user_id: user,
      attempt_id: newId(T0 - 60_000),
      state: 'failed',
      started_at: T0 - 60_000,
      run_id: 'r',
      run_deadline: 0,
      walk_completed: true,
      children: {},
      sections: { operations: { state: 'failed', error_code: 'TOKEN_INVALID' } },
      error_code: 'TOKEN_INVALID',
      revision: 3,
      due_at: T0 - 60_000 + HOUR,
    });
    expect(await tick(s.deps())).toEqual({}); // not due: nothing to visit
    await s.connections.putConnection(user, 'good', T0 - 1000);
    expect(s.store.heads.get(user)).toMatchObject({ rekeyed_at: T0 - 1000, due_at: T0 - 1000, revision: 4 });
    expect(await tick(s.deps())).toMatchObject({ due: 1 });
    expect(s.started).toEqual([user]);
    // The new attempt consumed the re-key: the next is due an hour after it again.
    expect(s.hourly.dueAfter(s.store.heads.get(user)!)).toBe(T0 + HOUR);
  });

  it("a step's own bound ends before its wait bound, so it hands over before the attempt stops waiting", () => {
    const hourly = new HourlyService({ store: new MemorySyncStore(), waitBoundMs: 12_000 });
    const now = T0 + 2000;
    // Dispatched at T0, 2 s ago: 12 s − 2 s − the finish guard, below the 25 s step timeout.
    expect(stepBoundMs({ timeoutMs: 25_000, hourly, now: () => now }, newStepId(T0))).toBe(9000);
    const long = new HourlyService({ store: new MemorySyncStore(), waitBoundMs: 15 * MINUTE });
    expect(stepBoundMs({ timeoutMs: 25_000, hourly: long, now: () => now }, newStepId(T0))).toBe(25_000);
  });

  it('the shard handler’s budget: admission with a first quota of its own', () => {
    const a = new Admission(policy({ calls: 1000 }), 80, 0, 0, 40);
    a.take();
    expect(a.takeFirst()).toBeUndefined();
    a.take();
    expect(a.takeFirst()).toBe('deferred_first_share');
  });
});

describe('a connection waiting for its first sync says where it stands (decision 365)', () => {
  it('its place among the new connections due before it, and the tick the share reaches it', async () => {
    const s = setup();
    const users: string[] = [];
    for (let i = 0; i < 8; i++) {
      const user = newId(T0 - 10_000 + i);
      await s.connections.putConnection(user, 'tok', T0 - 10_000 + i);
      users.push(user);
    }
    const defaults = policy({ calls: 949, hourlyCost: 25, firstCost: 150 });
    const queue = await s.connections.firstSyncQueue(users[6], T0, defaults);
    // Seventh in line; 3.16 first syncs a minute: the third tick after now reaches it.
    expect(queue?.position).toBe(7);
    const next = Math.floor(T0 / MINUTE) + 1;
    let admitted = 0;
    let minute = next;
    for (; admitted + firstCallsOfMinute(defaults, minute) / 150 < 7; minute++)
      admitted += firstCallsOfMinute(defaults, minute) / 150;
    expect(queue?.expected_at).toBe(minute * MINUTE);
    expect(queue!.expected_at).toBeGreaterThanOrEqual(T0 + 2 * MINUTE);
    expect((await s.connections.firstSyncQueue(users[0], T0, defaults))?.position).toBe(1);
    // Once it has an attempt, or without a connection: no queue to tell.
    await tick(s.deps({ admit: defaults }));
    expect(await s.connections.firstSyncQueue(users[0], T0, defaults)).toBeUndefined();
    expect(await s.connections.firstSyncQueue(newId(), T0, defaults)).toBeUndefined();
    // The ones admitted left the line: the seventh moved up.
    expect((await s.connections.firstSyncQueue(users[6], T0, defaults))?.position).toBeLessThan(7);
  });

  it('the hourly read keeps its shape: state, meta with every attempt field null, and the queue', () => {
    expect(queuedView({ position: 3, expected_at: T0 })).toEqual({
      state: 'queued',
      meta: { attempt_id: null, started_at: null, finished_at: null, error_code: null, sections: null },
      queue: { reason: 'first_sync', position: 3, expected_at: '2026-12-07T09:00:00.000Z' },
    });
  });
});

describe('the promise, on the emulator with its sliding limits (virtual time, production defaults)', () => {
  const start = Date.UTC(2026, 11, 7, 12, 0, 30);

  it('one new connection starts at the next tick (within 60 s) and succeeds', async () => {
    const sim = await startSyncSim({ start: start - HOUR });
    try {
      const user = await sim.connect('t.onenewuser', start);
      await sim.run(minutes(start, 3));
      const [first] = sim.attempts(user);
      expect(first.started_at - start).toBeLessThanOrEqual(60_000);
      expect(first).toMatchObject({ state: 'succeeded' });
    } finally {
      await sim.close();
    }
  });

  it('20 new ones beside a storming account and two refused tokens: all start within the promise, in order, and succeed', async () => {
    const sim = await startSyncSim({ start: start - HOUR });
    try {
      await sim.synced('t.storming0', start);
      for (const i of [1, 2])
        await sim.synced(`t.refused0${i}`, start - MINUTE, {
          state: 'failed',
          error_code: 'TOKEN_INVALID',
          sections: { operations: { state: 'failed', error_code: 'TOKEN_INVALID' } },
        });
      sim.emulator.faults = {
        '*': { storm: true, resetSeconds: 1, tokens: ['t.storming0'] },
        UsersService: { error: 40003, tokens: ['t.refused01', 't.refused02'] },
      };
      const fresh: string[] = [];
      for (let i = 0; i < 20; i++) fresh.push(await sim.connect(`t.fresh${String(i).padStart(4, '0')}`, start + i));
      const { admit } = sim;
      const promised = Math.ceil((20 * admit.firstCost) / (admit.calls * admit.firstShare)) + 1;
      await sim.run(minutes(start, promised + 2));
      const firsts = fresh.map((u) => sim.attempts(u)[0]);
      for (const first of firsts) {
        expect(first.started_at - start).toBeLessThanOrEqual(promised * MINUTE);
        expect(first.state).toBe('succeeded');
      }
      const ticks = firsts.map((f) => Math.floor(f.started_at / MINUTE));
      expect(ticks).toEqual([...ticks].sort((a, b) => a - b));
      // No call over T-Bank's per-address ceiling.
      expect([...sim.emulator.addresses.values()].every((a) => a.limited === 0)).toBe(true);
    } finally {
      await sim.close();
    }
  });

  it('under WORK_WAIT_BOUND_MS=12000 the first sync of the default account succeeds, continuing across steps', async () => {
    const sim = await startSyncSim({ start: start - HOUR, waitBoundMs: 12_000 });
    try {
      const user = await sim.connect('t.shortwait', start);
      await sim.run(minutes(start, 3));
      const [first] = sim.attempts(user);
      expect(first).toMatchObject({ state: 'succeeded' });
      expect(sim.stepResults.continued).toBeGreaterThan(0);
    } finally {
      await sim.close();
    }
  });
});

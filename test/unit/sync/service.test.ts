import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../../lib/secrets/sealer';
import { backfillDueIndex, ConnectionService } from '../../../lib/sync/connections';
import { DUE_SHARDS, dueShardOf, headFromItem, headItem, stepFromItem, stepItem } from '../../../lib/sync/keys';
import { HOUR_MS, HourlyHead, type Section } from '../../../lib/sync/model';
import { HourlyService, SETTLE_GRACE_MS } from '../../../lib/sync/service';
import { tick, tickUser, type TickDeps } from '../../../lib/sync/tick';
import { finishSteps } from './finish-steps';
import { MemorySyncStore } from './memory-sync-store';

/** The hourly policy over an in-memory store: fast, and exact about what each visit reads and writes. */
const WAIT = 15 * 60_000;
const keyring = new SecretSealer(parseKeyring(newKeyringEntry('unit')).keyring!);
const T0 = Date.UTC(2026, 11, 3, 9, 0, 0);

function setup() {
  const store = new MemorySyncStore();
  const hourly = new HourlyService({ store, waitBoundMs: WAIT });
  const connections = new ConnectionService({ store, sealer: async () => keyring });
  let clock = T0;
  const dispatched: string[] = [];
  const deps = (over: Partial<TickDeps> = {}): TickDeps => ({
    hourly,
    connections,
    dispatch: async (input) => void dispatched.push(input.section),
    now: () => clock,
    log: silentLogger,
    run: { run_id: newId(), run_deadline: clock + 55_000 },
    ...over,
  });
  return {
    store,
    hourly,
    connections,
    deps,
    dispatched,
    at: (ms: number) => (clock = ms),
    now: () => clock,
  };
}

describe('reserveHourly and the due entry it writes', () => {
  it('first → running until the run ends; settled → due an hour after its start; then the due branch', async () => {
    const s = setup();
    const user = newId();
    await s.connections.putConnection(user, 'tok', s.now());
    expect(s.store.conns.get(user)!.due_at).toBe(T0); // a new connection is due at once
    expect(await tickUser(s.deps(), user)).toBe('first');
    expect(s.store.conns.get(user)!.due_at).toBeUndefined(); // moved to the head
    const walked = (await s.hourly.head(user))!;
    expect(walked).toMatchObject({ state: 'running', walk_completed: true });
    expect(walked.due_at).toBe(T0 + SETTLE_GRACE_MS); // a lost settle is recoverable then
    s.at(T0 + 5000);
    expect(await finishSteps(s, user)).toMatchObject({ settled: { state: 'succeeded' } });
    expect((await s.hourly.head(user))!.due_at).toBe(T0 + HOUR_MS);
    s.at(T0 + HOUR_MS);
    expect(await tickUser(s.deps(), user)).toBe('due');
  });

  it('restart: a run that died mid-walk is closed INTERRUPTED once its run is over, reserved again only when due', async () => {
    const s = setup();
    const user = newId();
    await s.connections.putConnection(user, 'tok', s.now());
    const run = { run_id: newId(), run_deadline: T0 + 55_000 };
    const r = await s.hourly.reserveHourly(user, T0, run);
    expect(r.branch).toBe('first');
    expect((await s.hourly.head(user))!.due_at).toBe(run.run_deadline); // the instant restart can act
    s.at(T0 + 30_000);
    expect(await tickUser(s.deps(), user)).toBe('running');
    s.at(T0 + 60_000);
    expect(await tickUser(s.deps(), user)).toBe('restart');
    expect(await s.hourly.head(user)).toMatchObject({
      state: 'failed',
      error_code: 'INTERRUPTED',
      due_at: T0 + HOUR_MS,
    });
    expect(await tickUser(s.deps(), user)).toBe('not-due');
  });

  it('raced: a premise that moved makes the write fail, nothing is written', async () => {
    const s = setup();
    const user = newId();
    await s.connections.putConnection(user, 'tok', s.now());
    const run = { run_id: newId(), run_deadline: T0 + 55_000 };
    const seen = { head: undefined };
    expect((await s.hourly.reserveHourly(user, T0, run)).branch).toBe('first');
    // A second visit acting on the head it read before the first one wrote.
    expect((await s.hourly.reserveHourly(user, T0, run, seen)).branch).toBe('raced');
    expect(s.store.records.size).toBe(1);
  });

  it('no head without a connection: a removed connection is never resurrected by a stale visit', async () => {
    const s = setup();
    const user = newId();
    await s.connections.putConnection(user, 'tok', s.now());
    expect(await s.connections.removeConnection(user)).toBe(true);
    expect(await tickUser(s.deps(), user)).toBe('raced');
    expect(s.store.heads.has(user)).toBe(false);
  });

  it('a re-key keeps exactly one due entry: on the connection before the first attempt, on the head after', async () => {
    const s = setup();
    const user = newId();
    await s.connections.putConnection(user, 'tok1', s.now());
    await s.connections.putConnection(user, 'tok2', s.now());
    expect(s.store.conns.get(user)!.due_at).toBe(T0);
    await tickUser(s.deps(), user);
    await s.connections.putConnection(user, 'tok3', s.now());
    expect(s.store.conns.get(user)!.due_at).toBeUndefined();
    expect(s.store.heads.get(user)!.due_at).toBeDefined();
    expect(await s.connections.connectionToken(user)).toBe('tok3');
  });
});

describe('recovery and deferral', () => {
  it('a walked attempt whose settle was lost is recovered from its due entry, INTERRUPTED', async () => {
    const s = setup();
    const user = newId();
    await s.connections.putConnection(user, 'tok', s.now());
    await tickUser(s.deps(), user);
    const head = (await s.hourly.head(user))!;
    await finishSteps(s, user, { lost: true }); // ...and no settle follows
    s.at(head.due_at! + 1);
    const due = await collectDue(s);
    expect(due).toContain(user);
    expect(await tickUser(s.deps(), user)).toBe('not-due');
    expect(await s.hourly.head(user)).toMatchObject({ state: 'partial', error_code: 'INTERRUPTED' });
  });

  it('a visit that can do nothing yet moves the entry forward; a stale (future) entry is left alone', async () => {
    const s = setup();
    const user = newId();
    await s.connections.putConnection(user, 'tok', s.now());
    await tickUser(s.deps(), user); // walked; steps still out
    const walked = (await s.hourly.head(user))!;
    s.at(walked.due_at!);
    expect(await tickUser(s.deps(), user)).toBe('running');
    const moved = (await s.hourly.head(user))!;
    expect(moved.due_at).toBe(Math.min(walked.started_at + WAIT, s.now() + SETTLE_GRACE_MS));
    expect(await s.hourly.defer(moved, s.now())).toBe(false);
    // Past the wait bound the visit settles as it stands: no step ever wrote a row.
    s.at(walked.started_at + WAIT);
    await tickUser(s.deps(), user);
    expect(await s.hourly.head(user)).toMatchObject({ state: 'failed', error_code: 'DISPATCH_FAILED' });
  });

  it('nextLook is never in the past', () => {
    const { hourly } = setup();
    const head = { state: 'succeeded' as const, started_at: T0 - 2 * HOUR_MS, walk_completed: true, run_deadline: 0 };
    expect(hourly.nextLook(head, T0)).toBeGreaterThan(T0);
  });
});

async function collectDue(s: ReturnType<typeof setup>): Promise<string[]> {
  const out: string[] = [];
  for (let shard = 0; shard < DUE_SHARDS; shard++) for await (const u of s.hourly.dueUsers(shard, s.now())) out.push(u);
  return out;
}

describe('the tick reads the due index only', () => {
  it('idle connections cost nothing: one index query per shard, no head read', async () => {
    const s = setup();
    const users = Array.from({ length: 40 }, () => newId());
    for (const u of users) await s.connections.putConnection(u, 'tok', s.now());
    await tick(s.deps());
    for (const u of users) await finishSteps(s, u);
    s.at(T0 + 30 * 60_000);
    for (const k of Object.keys(s.store.calls)) delete s.store.calls[k];
    expect(await tick(s.deps())).toEqual({});
    expect(s.store.calls).toEqual({ dueEntries: DUE_SHARDS });
  });

  it('more due users than inlineMax: one shard invocation per shard with due users', async () => {
    const s = setup();
    for (let i = 0; i < 30; i++) await s.connections.putConnection(newId(), 'tok', s.now());
    const shards: number[] = [];
    const counts = await tick(s.deps({ inlineMax: 10, fanOut: async (shard) => void shards.push(shard) }));
    const withDue = new Set([...s.store.conns.keys()].map(dueShardOf));
    expect(shards.sort((a, b) => a - b)).toEqual([...withDue].sort((a, b) => a - b));
    expect(counts.fanned_out).toBe(withDue.size);
    expect(s.store.heads.size).toBe(0); // the coordinator reserved nobody itself
  });

  it('without a fan-out target an oversized due set is walked shard by shard', async () => {
    const s = setup();
    for (let i = 0; i < 30; i++) await s.connections.putConnection(newId(), 'tok', s.now());
    expect((await tick(s.deps({ inlineMax: 10 }))).first).toBe(30);
  });
});

describe('backfill of a table written before the due index', () => {
  it('gives every connection an entry once', async () => {
    const s = setup();
    const [fresh, old] = [newId(), newId()];
    await s.connections.putConnection(fresh, 'tok', s.now());
    await s.connections.putConnection(old, 'tok', s.now());
    await tickUser(s.deps(), old);
    delete s.store.heads.get(old)!.due_at; // as the old code wrote it
    delete s.store.conns.get(fresh)!.due_at;
    expect(await backfillDueIndex({ connections: s.store, hourly: s.store }, s.now())).toEqual({
      connections: 2,
      backfilled: 2,
    });
    expect(await collectDue(s)).toEqual(expect.arrayContaining([fresh, old]));
  });
});

describe('items: ISO times at rest, and the old numeric items still read', () => {
  const head: HourlyHead = {
    user_id: newId(),
    attempt_id: newId(),
    state: 'partial',
    started_at: T0,
    finished_at: T0 + 1234,
    run_id: 'run',
    run_deadline: T0 + 55_000,
    walk_completed: true,
    children: { portfolio: 'step1' },
    error_code: 'DEADLINE',
    revision: 3,
    due_at: T0 + HOUR_MS,
  };

  it('round-trips a head, writing ISO strings and the due entry', () => {
    const item = headItem(head);
    expect(item).toMatchObject({
      started_at: '2026-12-03T09:00:00.000Z',
      due_at: '2026-12-03T10:00:00.000Z',
      PK: `USER#${head.user_id}`,
      SK: 'HOURLY',
    });
    expect(item.due_shard).toMatch(/^DUE#\d+$/);
    expect(headFromItem(item)).toEqual(head);
  });

  it('reads a head and a step row written by the old code (epoch ms numbers, no due entry)', () => {
    const { due_at: _none, ...old } = head;
    const oldItem = { ...old, PK: `USER#${head.user_id}`, SK: 'HOURLY', entity: 'hourly' };
    expect(headFromItem(oldItem)).toEqual(old);
    const row = {
      attempt_id: head.attempt_id,
      step_id: 's',
      section: 'portfolio' as const,
      state: 'succeeded' as const,
    };
    expect(stepFromItem({ ...row, started_at: T0, finished_at: T0 + 5 })).toEqual({
      ...row,
      started_at: T0,
      finished_at: T0 + 5,
    });
    expect(stepFromItem(stepItem({ ...row, started_at: T0 }))).toEqual({ ...row, started_at: T0 });
  });

  it('takes named fields only: a stray attribute on the item does not reach the model', () => {
    expect(headFromItem({ ...headItem(head), token_sealed: 'x', PK: 'USER#other' })).toEqual(head);
  });
});

describe('the second phase: catalog.enrichment after the sections that discover instruments', () => {
  /** Runs one step of the running attempt to `state`, then what the step does next: the second phase, the settle. */
  async function finish(
    s: ReturnType<typeof setup>,
    user: string,
    section: Section,
    state: 'succeeded' | 'failed',
    code?: string,
  ) {
    const head = (await s.hourly.head(user))!;
    const row = { attempt_id: head.attempt_id, step_id: head.children[section]!, section };
    await s.hourly.startStep(user, { ...row, state: 'running', started_at: s.now() });
    await s.hourly.finishStep(user, row, state, s.now(), code);
  }
  const sendTo = (s: ReturnType<typeof setup>) => async (section: Section) => void s.dispatched.push(section);

  it('the walk sends the first phase only; enrichment is sent once, when both discoveries have succeeded', async () => {
    const s = setup();
    const user = newId();
    await s.connections.putConnection(user, 'tok', s.now());
    await tickUser(s.deps(), user);
    expect(s.dispatched).toEqual(['portfolio', 'operations', 'events.refresh']);
    const { attempt_id } = (await s.hourly.head(user))!;
    await finish(s, user, 'portfolio', 'succeeded');
    expect(await s.hourly.dispatchReady(user, attempt_id, s.now(), sendTo(s))).toEqual([]); // operations still out
    await finish(s, user, 'events.refresh', 'succeeded');
    // Everything the walk sent has finished, yet the attempt waits for its second phase.
    await finish(s, user, 'operations', 'succeeded');
    expect(await s.hourly.settleHourly(user, attempt_id, s.now())).toEqual({ skipped: 'waiting' });
    // Racing finishers (and a tick) all try: exactly one claim sends it.
    const sent = await Promise.all(
      Array.from({ length: 5 }, () => s.hourly.dispatchReady(user, attempt_id, s.now(), sendTo(s))),
    );
    expect(sent.flat()).toEqual(['catalog.enrichment']);
    expect(s.dispatched.filter((x) => x === 'catalog.enrichment')).toHaveLength(1);
    await finish(s, user, 'catalog.enrichment', 'succeeded');
    expect(await s.hourly.settleHourly(user, attempt_id, s.now())).toMatchObject({ settled: { state: 'succeeded' } });
  });

  it('every discovery failing: enrichment never starts, is DEPENDENCY_FAILED, and the attempt is failed', async () => {
    const s = setup();
    const user = newId();
    await s.connections.putConnection(user, 'tok', s.now());
    await tickUser(s.deps(), user);
    const { attempt_id } = (await s.hourly.head(user))!;
    for (const section of ['portfolio', 'operations', 'events.refresh'] as const)
      await finish(s, user, section, 'failed', 'UPSTREAM_ERROR');
    expect(await s.hourly.dispatchReady(user, attempt_id, s.now(), sendTo(s))).toEqual([]);
    const out = await s.hourly.settleHourly(user, attempt_id, s.now());
    expect(out).toMatchObject({ settled: { state: 'failed', error_code: 'UPSTREAM_ERROR' } });
    expect('settled' in out && out.settled.sections['catalog.enrichment']).toEqual({
      state: 'failed',
      error_code: 'DEPENDENCY_FAILED',
    });
  });

  it('one discovery failing: the others are kept, enrichment is DEPENDENCY_FAILED, the attempt partial', async () => {
    const s = setup();
    const user = newId();
    await s.connections.putConnection(user, 'tok', s.now());
    await tickUser(s.deps(), user);
    const { attempt_id } = (await s.hourly.head(user))!;
    await finish(s, user, 'portfolio', 'succeeded');
    await finish(s, user, 'events.refresh', 'succeeded');
    await finish(s, user, 'operations', 'failed', 'RATE_LIMITED');
    expect(await s.hourly.settleHourly(user, attempt_id, s.now())).toMatchObject({
      settled: { state: 'partial', error_code: 'RATE_LIMITED' },
    });
  });

  it('a second phase lost with the step that owed it is sent by the next visit, once', async () => {
    const s = setup();
    const user = newId();
    await s.connections.putConnection(user, 'tok', s.now());
    await tickUser(s.deps(), user);
    for (const section of ['portfolio', 'operations', 'events.refresh'] as const)
      await finish(s, user, section, 'succeeded'); // ...and the last one died before sending enrichment
    s.at((await s.hourly.head(user))!.due_at!);
    s.dispatched.length = 0;
    expect(await tickUser(s.deps(), user)).toBe('running');
    expect(s.dispatched).toEqual(['catalog.enrichment']);
    expect(await tickUser(s.deps(), user)).toBe('running');
    expect(s.dispatched).toEqual(['catalog.enrichment']);
  });

  it('a claimed enrichment whose dispatch failed settles as DISPATCH_FAILED at the wait bound', async () => {
    const s = setup();
    const user = newId();
    await s.connections.putConnection(user, 'tok', s.now());
    await tickUser(s.deps(), user);
    const { attempt_id, started_at } = (await s.hourly.head(user))!;
    for (const section of ['portfolio', 'operations', 'events.refresh'] as const)
      await finish(s, user, section, 'succeeded');
    await expect(
      s.hourly.dispatchReady(user, attempt_id, s.now(), async () => {
        throw new Error('Lambda invoke refused');
      }),
    ).rejects.toThrow('refused');
    expect(await s.hourly.settleHourly(user, attempt_id, s.now())).toEqual({ skipped: 'waiting' });
    s.at(started_at + WAIT);
    expect(await s.hourly.settleHourly(user, attempt_id, s.now())).toMatchObject({
      settled: { state: 'partial', error_code: 'DISPATCH_FAILED' },
    });
  });
});

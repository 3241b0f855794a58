import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { backfillDueIndex } from '../../../lib/sync/connections';
import { connectionKey, DUE_INDEX, DUE_SHARDS, dueShardKey, dueShardOf, headKey } from '../../../lib/sync/keys';
import { HOUR_MS, Section } from '../../../lib/sync/model';
import { SETTLE_GRACE_MS } from '../../../lib/sync/service';
import { tick, tickShard, tickUser, type TickDeps } from '../../../lib/sync/tick';
import { isolatedTable, stackClients, stackSealer } from '../../support/stack';
import { syncServices } from '../../support/sync';

/**
 * The due index on DynamoDB Local: the tick reads only it, every write of a
 * head moves the head's entry, and connections added, re-keyed and removed
 * while ticks run leave each user with exactly one entry (or none, removed).
 * Time is an injected clock; steps are finished through the service.
 */
const aws = stackClients();
let table: { name: string; drop: () => Promise<void> };
let s: ReturnType<typeof syncServices>;
let clock = Date.UTC(2026, 11, 3, 9, 0, 0);
let calls: string[] = [];

beforeAll(async () => {
  table = await isolatedTable(aws, 'SyncTable');
  s = syncServices({ documents: aws.documents, table: table.name, waitBoundMs: 15 * 60_000, sealer: stackSealer() });
  aws.documents.middlewareStack.add(
    (next, context) => async (args) => (calls.push(context.commandName ?? '?'), next(args)),
    { step: 'initialize', name: 'dueIndexTestCalls' },
  );
});
afterAll(async () => {
  await table.drop();
  aws.dynamodb.destroy();
});

const deps = (over: Partial<TickDeps> = {}): TickDeps => ({
  hourly: s.hourly,
  connections: s.connections,
  dispatch: async () => undefined,
  now: () => clock,
  log: silentLogger,
  run: { run_id: newId(), run_deadline: clock + 55_000 },
  ...over,
});

async function connected(n = 1): Promise<string[]> {
  const users = Array.from({ length: n }, () => newId());
  for (const u of users) await s.connections.putConnection(u, `t.${u}`, clock);
  return users;
}

/** The user's entries: in the items (consistent), and in the index itself. */
async function entries(user: string) {
  const read = async (key: Record<string, string>) =>
    (await aws.documents.send(new GetCommand({ TableName: table.name, Key: key, ConsistentRead: true }))).Item;
  const [head, conn] = [await read(headKey(user)), await read(connectionKey(user))];
  const indexed = await aws.documents.send(
    new QueryCommand({
      TableName: table.name,
      IndexName: DUE_INDEX,
      KeyConditionExpression: 'due_shard = :s',
      FilterExpression: 'user_id = :u',
      ExpressionAttributeValues: { ':s': dueShardKey(dueShardOf(user)), ':u': user },
    }),
  );
  return {
    head: head !== undefined,
    conn: conn !== undefined,
    onHead: head?.due_at !== undefined,
    onConn: conn?.due_at !== undefined,
    indexed: indexed.Items?.length ?? 0,
  };
}

/** Exactly one entry while connected, on the head once it exists; none once removed. */
async function expectConsistent(user: string) {
  const e = await entries(user);
  if (!e.conn) return expect(e).toEqual({ head: false, conn: false, onHead: false, onConn: false, indexed: 0 });
  expect(e).toEqual({ head: e.head, conn: true, onHead: e.head, onConn: !e.head, indexed: 1 });
}

/** Finishes the steps of the user's running attempt, both phases, as the steps would (without settling). */
async function finishAll(user: string) {
  const head = (await s.hourly.head(user))!;
  const finish = async (section: Section, stepId: string) => {
    const row = { attempt_id: head.attempt_id, step_id: stepId, section };
    await s.hourly.startStep(user, { ...row, state: 'running', started_at: clock });
    await s.hourly.finishStep(user, row, 'succeeded', clock);
  };
  for (const [section, stepId] of Object.entries(head.children)) await finish(section as Section, stepId);
  const second: Array<[Section, string]> = [];
  await s.hourly.dispatchReady(
    user,
    head.attempt_id,
    clock,
    async (section, stepId) => void second.push([section, stepId]),
  );
  for (const [section, stepId] of second) await finish(section, stepId);
  return head.attempt_id;
}

/** Finishes the attempt's steps and settles, as the last step would. */
const finishSteps = async (user: string) => s.hourly.settleHourly(user, await finishAll(user), clock);

const recordingDispatch = () => {
  const sent: Array<{ user_id: string; section: Section }> = [];
  return { sent, dispatch: async (input: { user_id: string; section: Section }) => void sent.push(input) };
};

it('a new connection is due at once; an idle tick costs one query per shard and nothing per connection', async () => {
  clock += 2 * HOUR_MS;
  const users = await connected(6);
  for (const u of users) await expectConsistent(u);
  const counts = await tick(deps());
  expect(counts.first).toBeGreaterThanOrEqual(users.length);
  for (const u of users) {
    expect(await finishSteps(u)).toMatchObject({ settled: { state: 'succeeded' } });
    await expectConsistent(u);
  }
  clock += 30 * 60_000;
  calls = [];
  expect(await tick(deps())).toEqual({});
  expect(calls).toEqual(Array(DUE_SHARDS).fill('QueryCommand'));
  // An hour after their start they are due again, through the index alone.
  clock += 31 * 60_000;
  const again = await tick(deps());
  expect(again.due).toBeGreaterThanOrEqual(users.length);
});

it('recovery comes from the index: a walked attempt whose settle was lost is closed by the tick', async () => {
  const [user] = await connected();
  expect(await tickUser(deps(), user)).toBe('first');
  await finishAll(user); // no settle follows: it was lost
  clock += SETTLE_GRACE_MS + 1000;
  await tick(deps());
  expect(await s.hourly.head(user)).toMatchObject({ state: 'partial', error_code: 'INTERRUPTED' });
  await expectConsistent(user);
});

it('a tick that died mid-walk is restarted from the index once its run is over', async () => {
  const [user] = await connected();
  const run = { run_id: newId(), run_deadline: clock + 55_000 };
  await s.hourly.reserveHourly(user, clock, run); // ...and the invocation died
  clock += 30_000;
  expect(await tick(deps())).toEqual({}); // not due before its run is over
  clock += 30_000;
  expect((await tick(deps())).restart).toBe(1);
  expect(await s.hourly.head(user)).toMatchObject({ error_code: 'INTERRUPTED' });
  await expectConsistent(user);
});

it('fan-out: more due users than inlineMax are taken by one shard invocation per shard', async () => {
  clock += 2 * HOUR_MS; // everything so far is due again
  const users = await connected(12);
  const shards: number[] = [];
  const fanOut = async (shard: number) => {
    shards.push(shard);
    await tickShard(deps(), shard); // offline's Lambda port does this in the real stack
  };
  const counts = await tick(deps({ inlineMax: 3, fanOut }));
  expect(counts.fanned_out).toBe(shards.length);
  expect(new Set(shards).size).toBe(shards.length);
  for (const u of users) expect((await s.hourly.head(u))!.state).toBe('running');
});

describe('races on DynamoDB Local', () => {
  it('re-key (PUT again) racing the tick’s reservation leaves exactly one entry and the newest token', async () => {
    const users = await connected(10);
    const { dispatch } = recordingDispatch();
    const later = (ms: number) => new Promise((r) => setTimeout(r, ms));
    await Promise.all(
      users.flatMap((u, i) => [
        tickUser(deps({ dispatch }), u).catch(() => 'failed'),
        s.connections.putConnection(u, `mid.${u}`, clock),
        // Spread over the reservation's writes: before, between and after them.
        later(i * 4).then(() => s.connections.putConnection(u, `new.${u}`, clock)),
      ]),
    );
    for (const u of users) {
      await expectConsistent(u);
      expect([`mid.${u}`, `new.${u}`]).toContain(await s.connections.connectionToken(u));
      // And once the head surely exists.
      await s.connections.putConnection(u, `last.${u}`, clock);
      await expectConsistent(u);
      expect(await s.connections.connectionToken(u)).toBe(`last.${u}`);
    }
  });

  it('add racing a tick: each new user is reserved or still due, never lost', async () => {
    clock += 2 * HOUR_MS;
    const adding = Array.from({ length: 10 }, () => newId());
    await Promise.all([
      tick(deps()),
      ...adding.map((u) => s.connections.putConnection(u, `t.${u}`, clock)),
      tick(deps()),
    ]);
    for (const u of adding) await expectConsistent(u);
    await tick(deps());
    for (const u of adding) expect((await entries(u)).head).toBe(true);
  });

  it('removal racing the reservation: no head, no entry, and a stale visit resurrects nothing', async () => {
    const users = await connected(10);
    await Promise.all(
      users.flatMap((u) => [tickUser(deps(), u).catch(() => 'failed'), s.connections.removeConnection(u)]),
    );
    for (const u of users) {
      await expectConsistent(u);
      expect(await tickUser(deps(), u)).toBe('raced'); // a visit from an index entry read before the removal
      expect((await entries(u)).head).toBe(false);
    }
  });
});

it('a table written before the index: old items read, and the backfill gives each connection its entry', async () => {
  const [withHead, without] = [newId(), newId()];
  const old = (user: string) => ({
    user_id: user,
    attempt_id: newId(),
    state: 'succeeded',
    started_at: clock - 2 * HOUR_MS, // epoch ms, as the old code wrote times
    run_id: 'r',
    run_deadline: clock - 2 * HOUR_MS + 55_000,
    walk_completed: true,
    children: {},
    revision: 4,
  });
  const put = (Item: Record<string, unknown>) => aws.documents.send(new PutCommand({ TableName: table.name, Item }));
  for (const user of [withHead, without])
    await put({ ...connectionKey(user), user_id: user, created_at: new Date(clock).toISOString(), token_sealed: 'x' });
  await put({ ...headKey(withHead), entity: 'hourly', ...old(withHead) });
  expect(await s.hourly.head(withHead)).toMatchObject({ started_at: clock - 2 * HOUR_MS, state: 'succeeded' });
  expect((await entries(withHead)).indexed + (await entries(without)).indexed).toBe(0);
  const result = await backfillDueIndex({ connections: s.store, hourly: s.store }, clock);
  expect(result.backfilled).toBeGreaterThanOrEqual(2);
  for (const user of [withHead, without]) await expectConsistent(user);
});

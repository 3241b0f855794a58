import { newId } from '../../../lib/ident';
import { DynamoDbPollerLease } from '../../../lib/scan/dynamodb-lease';
import { ensurePoller, PollerDeps, runPoller } from '../../../lib/scan/poller';
import { silentLogger } from '../../../lib/log';
import { isolatedTable } from '../../support/stack';
import { aws, harness, scanSuite } from '../../support/scan';

/** The poller's lease on DynamoDB Local: its conditions hold under concurrency (the policy's unit tests use a fake). */
scanSuite();

async function leaseOnOwnTable() {
  const table = await isolatedTable(aws, 'ScanTable');
  return { lease: new DynamoDbPollerLease(aws.documents, table.name), drop: table.drop };
}

it('50 requests at once on an idle gateway: exactly one takes the lease and starts a poller', async () => {
  const { lease, drop } = await leaseOnOwnTable();
  try {
    const started: string[] = [];
    const poller: PollerDeps = { lease, newId: () => newId(), start: async (h) => void started.push(h) };
    const now = Date.now();
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => ensurePoller(poller, now, silentLogger)));
    expect(outcomes.filter((o) => o === 'started')).toHaveLength(1);
    expect(outcomes.filter((o) => o === 'running')).toHaveLength(49);
    expect(started).toHaveLength(1);
    expect((await lease.read()).lease?.holder).toBe(started[0]);
  } finally {
    await drop();
  }
});

it('an expired lease (a crashed poller) is taken by one of many racing takers; a live one by none', async () => {
  const { lease, drop } = await leaseOnOwnTable();
  try {
    const now = Date.now();
    await lease.acquire({ holder: 'crashed', expires_at: now - 1 }, now);
    const won = await Promise.all(
      Array.from({ length: 20 }, (_, i) => lease.acquire({ holder: `t${i}`, expires_at: now + 60_000 }, now)),
    );
    expect(won.filter(Boolean)).toHaveLength(1);
    const again = await Promise.all(
      Array.from({ length: 5 }, (_, i) => lease.acquire({ holder: `u${i}`, expires_at: now + 60_000 }, now)),
    );
    expect(again.some(Boolean)).toBe(false);
  } finally {
    await drop();
  }
});

it('release: only by the holder, and not when a request came in after `quietSince`; hand-over moves it', async () => {
  const { lease, drop } = await leaseOnOwnTable();
  try {
    const now = Date.now();
    expect((await lease.demand({ holder: 'a', expires_at: now + 60_000 }, now)).holder).toBe('a');
    expect((await lease.demand({ holder: 'b', expires_at: now + 60_000 }, now + 5)).holder).toBe('a'); // held
    expect(await lease.release('b', now + 1000)).toBe(false); // not the holder
    expect(await lease.release('a', now + 5)).toBe(false); // a request at now+5: not quiet since then
    expect(await lease.handOver('a', { holder: 'c', expires_at: now + 10_000 })).toBe(true);
    expect(await lease.confirm('a', now + 55_000)).toBe(false);
    expect(await lease.confirm('c', now + 55_000)).toBe(true);
    expect(await lease.release('c', now + 6)).toBe(true);
    expect((await lease.read()).lease).toBeUndefined();
  } finally {
    await drop();
  }
});

it('a schedule tick while a poller holds the lease does not poll (no second poller)', async () => {
  const h = await harness();
  const lease = new DynamoDbPollerLease(aws.documents, (h.deps.jobs as unknown as { table: string }).table);
  const poller: PollerDeps = { lease, newId: () => newId(), start: async () => undefined };
  await lease.acquire({ holder: 'live', expires_at: h.clock.now + 60_000 }, h.clock.now);
  expect(await runPoller(h.deps, poller, { hardEndAt: h.clock.now + 55_000 })).toMatchObject({
    outcome: 'lease-held',
    passes: 0,
  });
});

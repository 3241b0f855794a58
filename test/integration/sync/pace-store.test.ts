import { DynamoPaceStore } from '../../../lib/sync/dynamodb-pace';
import { paceFor } from '../../../lib/sync/pacer';
import { isolatedTable, stackClients } from '../../support/stack';

/**
 * The pacing schedule on DynamoDB Local: concurrent takers at one instant each get their own send
 * instant, spaced by the interval (the idle write is won by one, the others queue behind it with
 * the atomic ADD), whether or not the failed condition returns the item; a pause holds them all.
 */
const aws = stackClients();
afterAll(() => aws.dynamodb.destroy());

it('60 concurrent takers on an idle schedule: 60 distinct instants, none closer than the interval', async () => {
  const table = await isolatedTable(aws, 'SyncTable');
  try {
    const store = new DynamoPaceStore({ documents: aws.documents, table: table.name });
    const pace = paceFor(950, 60_000);
    const now = Date.now();
    const taken = await Promise.all(
      Array.from({ length: 60 }, () => store.takePace('EGRESS', now, pace, now + 60_000, now + 120_000)),
    );
    const at = taken.map((t) => ('at' in t ? t.at : NaN)).sort((a, b) => a - b);
    expect(at.every(Number.isFinite)).toBe(true);
    expect(at[0]).toBe(now);
    for (let i = 1; i < at.length; i++) expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(pace.intervalMs - 1e-3);
    // The queue is 60 intervals long: a taker that may wait 1 s only is told when it would be free.
    expect(await store.takePace('EGRESS', now, pace, now + 1000, now + 120_000)).toEqual({
      busyUntil: expect.any(Number),
    });
    expect(await store.paceQueuedMs('EGRESS', now)).toBeCloseTo(60 * pace.intervalMs, 3);
    // A pause moves the schedule past it; the queue never moves back.
    await store.pausePace('EGRESS', now + 30_000, pace, now + 120_000);
    expect(await store.pacePausedUntil('EGRESS')).toBe(now + 30_000);
    expect(await store.takePace('EGRESS', now, pace, now + 60_000, now + 120_000)).toEqual({ at: now + 30_000 });
    await store.pausePace('EGRESS', now + 10_000, pace, now + 120_000);
    expect(await store.pacePausedUntil('EGRESS')).toBe(now + 30_000);
  } finally {
    await table.drop();
  }
}, 60_000);

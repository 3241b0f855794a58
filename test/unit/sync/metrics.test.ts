import { newId } from '../../../lib/ident';
import { runInvocation, silentLogger } from '../../../lib/log';
import { metricsOutput } from '../../../lib/metrics';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../../lib/secrets/sealer';
import { ConnectionService } from '../../../lib/sync/connections';
import { HOUR_MS } from '../../../lib/sync/model';
import { HourlyService } from '../../../lib/sync/service';
import { tickUser, type TickDeps } from '../../../lib/sync/tick';
import { finishSteps } from './finish-steps';
import { MemorySyncStore } from './memory-sync-store';

/**
 * The hourly sync's metrics (docs/operations.md): an attempt counted once, by
 * the write that settled or closed it, with its outcome and cause; a new
 * attempt's lateness against its hour; nothing for a raced visit.
 */

const T0 = Date.UTC(2026, 11, 3, 9, 0, 0);
const keyring = new SecretSealer(parseKeyring(newKeyringEntry('unit')).keyring!);
/** A parsed line, walked freely in assertions. */
type Line = ReturnType<typeof JSON.parse>;

function setup() {
  const store = new MemorySyncStore();
  const hourly = new HourlyService({ store, waitBoundMs: 15 * 60_000 });
  const connections = new ConnectionService({ store, sealer: async () => keyring });
  let clock = T0;
  const deps = (): TickDeps => ({
    hourly,
    connections,
    dispatch: async () => undefined,
    now: () => clock,
    log: silentLogger,
    run: { run_id: newId(), run_deadline: clock + 55_000 },
  });
  return { hourly, connections, deps, at: (ms: number) => (clock = ms), now: () => clock };
}

async function metricLines(body: () => Promise<void>): Promise<Line[]> {
  const lines: string[] = [];
  const write = metricsOutput.write;
  metricsOutput.write = (l) => lines.push(l);
  try {
    await runInvocation({ function: 'syncTick', cold_start: false }, body);
  } finally {
    metricsOutput.write = write;
  }
  return lines.map((l) => JSON.parse(l));
}

describe('sync metrics', () => {
  it('a settled attempt once, a new attempt late against its hour, a closed one INTERRUPTED', async () => {
    const s = setup();
    const user = newId();
    const lines = await metricLines(async () => {
      await s.connections.putConnection(user, 'tok', s.now());
      expect(await tickUser(s.deps(), user)).toBe('first');
      s.at(T0 + 5000);
      await finishSteps(s, user);
      // Settling again finds nothing running: no second count.
      await s.hourly.settleHourly(user, (await s.hourly.head(user))!.attempt_id, s.now());
      // Due at T0 + 1 h; the tick comes 3 minutes later, then its run dies mid-walk.
      s.at(T0 + HOUR_MS + 180_000);
      expect(
        (await s.hourly.reserveHourly(user, s.now(), { run_id: newId(), run_deadline: s.now() + 55_000 })).branch,
      ).toBe('due');
      s.at(T0 + 2 * HOUR_MS + 200_000);
      expect(await tickUser(s.deps(), user)).toBe('restart');
    });
    const settled = lines.filter((l) => typeof l.SyncAttempts === 'number');
    expect(settled.map((l) => [l.outcome, l.cause, l.SyncAttemptsNotSucceeded])).toEqual([
      ['succeeded', 'none', 0],
      ['failed', 'INTERRUPTED', 1],
    ]);
    expect(settled.every((l) => l.user_id === user && l.domain === 'sync')).toBe(true);
    const lateness = lines.filter((l) => typeof l.SyncAttemptLateness === 'number').map((l) => l.SyncAttemptLateness);
    // The due start, 3 min late; the restart's new attempt, 200 s past the previous start's hour.
    expect(lateness).toEqual([180_000, 20_000]);
  });

  it('a raced reservation counts nothing', async () => {
    const s = setup();
    const user = newId();
    const lines = await metricLines(async () => {
      await s.connections.putConnection(user, 'tok', s.now());
      const run = { run_id: newId(), run_deadline: T0 + 55_000 };
      expect((await s.hourly.reserveHourly(user, T0, run)).branch).toBe('first');
      expect((await s.hourly.reserveHourly(user, T0, run, { head: undefined })).branch).toBe('raced');
    });
    expect(lines).toEqual([]);
  });
});

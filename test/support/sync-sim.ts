import { BrokerageEmulator } from '../../emulator/brokerage/emulator';
import { newId } from '../../lib/ident';
import { createLogger, Logger, silentLogger } from '../../lib/log';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../lib/secrets/sealer';
import type { AdmitPolicy } from '../../lib/sync/admission';
import { ConnectionService } from '../../lib/sync/connections';
import type { HourlyHead } from '../../lib/sync/model';
import { EGRESS_PACE } from '../../lib/sync/pacer';
import { ADDRESS_LIMITS, admitPolicy } from '../../lib/sync/rate-budget';
import { DEFAULT_SECTION_SETTINGS, type SectionSettings } from '../../lib/sync/sections';
import { HourlyService } from '../../lib/sync/service';
import { Dispatch, runStep } from '../../lib/sync/step';
import { tick } from '../../lib/sync/tick';
import { MemorySyncStore } from '../unit/sync/memory-sync-store';
import { MemorySyncDataStore } from './memory-sync-data-store';
import { VirtualClock } from './virtual-clock';

/**
 * The hourly sync on one virtual clock (virtual-clock.ts), for the first-sync bench and tests: the
 * real tick (admission, spread dispatches), steps, client and pacer against the T-Bank emulator over
 * HTTP, which holds limits.md's per-address and per-token limits in sliding windows of a REAL
 * minute; stores in memory. Defaults are production's: one egress address, 25 s steps, a 15 min
 * wait bound, SYNC_CALLS_PER_SYNC 25, SYNC_CALLS_PER_FIRST_SYNC 150, 3 years of history.
 */

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
const keyring = new SecretSealer(parseKeyring(newKeyringEntry('sim')).keyring!);

export interface SyncSimOptions {
  start: number;
  waitBoundMs?: number;
  stepTimeoutMs?: number;
  admit?: AdmitPolicy;
  /** Section settings (history depth); production's by default. */
  settings?: SectionSettings;
  /** Due users one tick visits itself (INLINE_MAX by default; Infinity: never fan out). */
  inlineMax?: number;
  /** Logs at this level (benches: BENCH_DEBUG). */
  logLevel?: 'info' | 'warn' | 'error';
}

export type SyncSim = Awaited<ReturnType<typeof startSyncSim>>;

export async function startSyncSim(opts: SyncSimOptions) {
  const clock = new VirtualClock(opts.start);
  const emulator = new BrokerageEmulator({ windowMs: MINUTE, clock: clock.read, addressLimits: ADDRESS_LIMITS });
  const url = await emulator.listen();
  const realFetch = globalThis.fetch;
  /** Every request's send instant, for the sliding peaks. */
  const sent: number[] = [];
  globalThis.fetch = (input, init) => {
    sent.push(clock.now);
    return clock.track(realFetch(input, init));
  };
  const log: Logger = opts.logLevel ? createLogger({ sim: 'sync' }, { level: opts.logLevel }) : silentLogger;
  const store = new MemorySyncStore();
  const waitBoundMs = opts.waitBoundMs ?? 15 * MINUTE;
  const hourly = new HourlyService({ store, waitBoundMs });
  const connections = new ConnectionService({ store, sealer: async () => keyring });
  const data = new MemorySyncDataStore();
  const running = new Set<Promise<unknown>>();
  const stepResults: Record<string, number> = {};
  const dispatch: Dispatch = async (input) => {
    const p = runStep(
      {
        hourly,
        dispatch,
        connections,
        data,
        tbank: {
          baseUrl: url,
          appName: 'sim',
          rateWindowMs: MINUTE,
          egressAddresses: 1,
          backoffMs: 20,
          clock: clock.read,
          sleep: clock.sleep,
        },
        settings: opts.settings ?? DEFAULT_SECTION_SETTINGS,
        // The step's bound in virtual time (its waits for send instants); the real timer only guards a hang.
        timeoutMs: opts.stepTimeoutMs ?? 25_000,
        hardTimeoutMs: 600_000,
        now: clock.read,
        log,
      },
      input,
    ).then(
      (r) => (stepResults[r] = (stepResults[r] ?? 0) + 1),
      (err: unknown) => (stepResults[`threw: ${String(err)}`] = 1),
    );
    running.add(p);
    void p.finally(() => running.delete(p));
  };
  const admit = opts.admit ?? admitPolicy(1, MINUTE, 25, 150);

  return {
    clock,
    emulator,
    store,
    hourly,
    connections,
    data,
    sent,
    stepResults,
    admit,
    /** A new connection made now (due at once). */
    async connect(token: string, at = clock.now): Promise<string> {
      const user = newId(at);
      await connections.putConnection(user, token, at);
      return user;
    },
    /** A connection synced before, whose next attempt is due at `due` (`operations` as its last attempt left it). */
    async synced(
      token: string,
      due: number,
      last: Partial<HourlyHead> = {},
      user = newId(due - HOUR),
    ): Promise<string> {
      await connections.putConnection(user, token, due - HOUR);
      store.conns.get(user)!.due_at = undefined;
      store.heads.set(user, {
        user_id: user,
        attempt_id: newId(due - HOUR),
        state: 'succeeded',
        started_at: due - HOUR,
        run_id: 'seed',
        run_deadline: 0,
        walk_completed: true,
        children: {},
        sections: { operations: { state: 'succeeded' } },
        revision: 1,
        due_at: due,
        ...last,
      });
      return user;
    },
    /** Runs the minute ticks at `at[i]` (production's schedule: each whole minute) and every step they start, to the end. */
    async run(at: number[], onTick?: (counts: Record<string, number>, at: number) => void): Promise<void> {
      const work = async () => {
        const ticks: Promise<unknown>[] = [];
        for (const instant of at) {
          await clock.until(instant);
          ticks.push(
            tick({
              hourly,
              connections,
              dispatch,
              admit,
              queuedMs: (now) => data.paceQueuedMs(EGRESS_PACE, now),
              now: clock.read,
              sleep: clock.sleep,
              log,
              run: { run_id: newId(), run_deadline: clock.now + 55_000 },
              ...(opts.inlineMax !== undefined ? { inlineMax: opts.inlineMax } : {}),
            }).then((counts) => onTick?.(counts, instant)),
          );
        }
        await Promise.all(ticks);
        while (running.size) await Promise.all([...running]);
      };
      await clock.run(work());
    },
    /** Every attempt of `user`, oldest first (records and the head). */
    attempts(user: string): HourlyHead[] {
      const byId = new Map([...store.records.values()].filter((r) => r.user_id === user).map((r) => [r.attempt_id, r]));
      const head = store.heads.get(user);
      if (head) byId.set(head.attempt_id, head); // the fresher copy of the current attempt
      return [...byId.values()].sort((a, b) => a.started_at - b.started_at);
    },
    async close(): Promise<void> {
      globalThis.fetch = realFetch;
      await emulator.close();
    },
  };
}

/** Whole minutes from the first at or after `from`, `count` of them: the minute schedule's instants. */
export const minutes = (from: number, count: number): number[] =>
  Array.from({ length: count }, (_, i) => Math.ceil(from / MINUTE) * MINUTE + i * MINUTE);

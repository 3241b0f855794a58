import { BrokerageEmulator } from '../emulator/brokerage/emulator';
import { newId } from '../lib/ident';
import { createLogger, silentLogger } from '../lib/log';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../lib/secrets/sealer';
import { ConnectionService } from '../lib/sync/connections';
import type { HourlyHead } from '../lib/sync/model';
import { EGRESS_PACE } from '../lib/sync/pacer';
import { ADDRESS_LIMITS, admitPolicy } from '../lib/sync/rate-budget';
import { DEFAULT_SECTION_SETTINGS } from '../lib/sync/sections';
import { HourlyService } from '../lib/sync/service';
import { Dispatch, runStep } from '../lib/sync/step';
import { tick } from '../lib/sync/tick';
import { MemorySyncDataStore } from '../test/support/memory-sync-data-store';
import { VirtualClock } from '../test/support/virtual-clock';
import { MemorySyncStore } from '../test/unit/sync/memory-sync-store';

/**
 * Time to first sync: N new connections made at once beside H connections already synced (their
 * hourly syncs due across the hour), with the production defaults (one egress address, a 60 s
 * minute, SYNC_CALLS_PER_SYNC 25, SYNC_CALLS_PER_FIRST_SYNC 150, 3 years of history, 25 s steps),
 * the real tick, steps, client, pacer and T-Bank emulator over HTTP holding limits.md's per-address
 * limits in sliding real windows, on one virtual clock (test/support/virtual-clock.ts) as the
 * egress bench. Reported per new connection: connection → first attempt started, and → first
 * attempt succeeded (p50 / max), the promise's bound, the hourly syncs' lateness, budget share, 429s.
 */

const keyring = new SecretSealer(parseKeyring(newKeyringEntry('bench')).keyring!);
const T0 = Date.UTC(2026, 11, 4, 12, 0, 30);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export interface SyncFirstRow {
  n: number;
  hourlyUsers: number;
  /** The promise: ceil(N × first cost / first share of a minute) + 1 minutes. */
  promisedMinutes: number;
  startS: { p50: number; max: number };
  successS: { p50: number; max: number };
  started: number;
  succeeded: number;
  inOrder: boolean;
  hourlyLateMaxS: number;
  calls: number;
  perMinuteShare: number;
  limited: number;
  outcomes: Record<string, number>;
  wallS: number;
}

const quantile = (xs: number[], q: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

export async function syncFirst(opts: {
  n: number;
  hourlyUsers?: number;
  minutes?: number;
  /** Beside them, the issue's hostile neighbours: one account in a long 429 storm, two whose tokens T-Bank refuses. */
  troubled?: boolean;
}): Promise<SyncFirstRow> {
  const { n } = opts;
  const hourlyUsers = opts.hourlyUsers ?? 100;
  const say = (line: string) => process.stdout.write(`[bench sync-first] ${line}\n`);
  const clock = new VirtualClock(T0 - HOUR);
  const emulator = new BrokerageEmulator({ windowMs: MINUTE, clock: clock.read, addressLimits: ADDRESS_LIMITS });
  const url = await emulator.listen();
  const realFetch = globalThis.fetch;
  const sent: number[] = [];
  globalThis.fetch = (input, init) => {
    sent.push(clock.now);
    return clock.track(realFetch(input, init));
  };
  const store = new MemorySyncStore();
  const hourly = new HourlyService({ store, waitBoundMs: 15 * MINUTE });
  const connections = new ConnectionService({ store, sealer: async () => keyring });
  const data = new MemorySyncDataStore();
  const running = new Set<Promise<unknown>>();
  const dispatch: Dispatch = async (input) => {
    const p = runStep(
      {
        hourly,
        dispatch,
        connections,
        data,
        tbank: {
          baseUrl: url,
          appName: 'bench',
          rateWindowMs: MINUTE,
          egressAddresses: 1,
          backoffMs: 20,
          clock: clock.read,
          sleep: clock.sleep,
        },
        settings: DEFAULT_SECTION_SETTINGS,
        timeoutMs: 25_000,
        hardTimeoutMs: 600_000,
        now: clock.read,
        log: process.env.BENCH_DEBUG ? createLogger({ bench: 'sync-first' }, { level: 'warn' }) : silentLogger,
      },
      input,
    ).catch((err: unknown) => process.stderr.write(`[bench sync-first] a step threw: ${String(err)}\n`));
    running.add(p);
    void p.finally(() => running.delete(p));
  };
  const admit = admitPolicy(1, MINUTE, 25, 150);
  const promisedMinutes = Math.ceil((n * admit.firstCost) / (admit.calls * admit.firstShare)) + 1;
  const began = performance.now();
  try {
    // Hourly users: synced within the last hour, due across the coming one.
    const hourlyDue = new Map<string, number>();
    for (let i = 0; i < hourlyUsers; i++) {
      const user = newId(T0 - HOUR + i);
      await connections.putConnection(user, `t.h${user}`, T0 - HOUR);
      store.conns.get(user)!.due_at = undefined;
      const due = T0 + Math.floor((i * HOUR) / hourlyUsers);
      hourlyDue.set(user, due);
      const head: HourlyHead = {
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
      };
      store.heads.set(user, head);
    }
    if (opts.troubled) {
      // Synced accounts due just before the new ones: one storming from 5 minutes before until 3 after,
      // two whose last attempt was refused (TOKEN_INVALID) and whose tokens T-Bank keeps refusing.
      const troubled = [0, 1, 2].map((i) => newId(T0 - 10 * MINUTE + i));
      // The storming one is due with the new ones: its retries fall while they are admitted.
      for (const [i, user] of troubled.entries()) {
        await connections.putConnection(user, `t.x${user}`, T0 - 2 * HOUR);
        store.conns.get(user)!.due_at = undefined;
        const started = i === 0 ? T0 - HOUR : T0 - HOUR - 5 * MINUTE + i;
        const refused =
          i > 0 ? { state: 'failed' as const, error_code: 'TOKEN_INVALID' } : { state: 'succeeded' as const };
        store.heads.set(user, {
          user_id: user,
          attempt_id: newId(started),
          state: i > 0 ? 'failed' : 'succeeded',
          started_at: started,
          run_id: 'seed',
          run_deadline: 0,
          walk_completed: true,
          children: {},
          sections: { operations: refused },
          ...(i > 0 ? { error_code: 'TOKEN_INVALID' } : {}),
          revision: 1,
          due_at: started + HOUR,
        });
      }
      emulator.faults = {
        '*': { storm: true, resetSeconds: 1, tokens: [`t.x${troubled[0]}`] },
        UsersService: { error: 40003, tokens: [`t.x${troubled[1]}`, `t.x${troubled[2]}`] },
      };
      void clock.until(T0 + 3 * MINUTE).then(() => (emulator.faults = { UsersService: emulator.faults.UsersService }));
    }
    // The new connections, made a few ms apart in this order.
    const fresh: { user: string; at: number }[] = [];
    for (let i = 0; i < n; i++) {
      const at = T0 + i * 5;
      const user = newId(at);
      await connections.putConnection(user, `t.f${user}`, at);
      fresh.push({ user, at });
    }
    const minutes = opts.minutes ?? promisedMinutes + 5;
    const work = async () => {
      const ticks: Promise<unknown>[] = [];
      // Ticks at every whole minute from the first after T0 (5 minutes before it with the storm).
      const first = Math.ceil(T0 / MINUTE) * MINUTE - (opts.troubled ? 5 * MINUTE : 0);
      for (let minute = 0; minute < minutes + (opts.troubled ? 5 : 0); minute++) {
        await clock.until(first + minute * MINUTE);
        ticks.push(
          tick({
            hourly,
            connections,
            dispatch,
            admit,
            queuedMs: (now) => data.paceQueuedMs(EGRESS_PACE, now),
            now: clock.read,
            sleep: clock.sleep,
            log: process.env.BENCH_DEBUG ? createLogger({ bench: 'sync-first' }, { level: 'info' }) : silentLogger,
            run: { run_id: newId(), run_deadline: clock.now + 55_000 },
            ...(process.env.BENCH_INLINE_MAX ? { inlineMax: Number(process.env.BENCH_INLINE_MAX) } : {}),
          }).then((counts) => {
            if (process.env.BENCH_DEBUG) say(`minute ${minute}: ${JSON.stringify(counts)}`);
          }),
        );
      }
      await Promise.all(ticks);
      while (running.size) await Promise.all([...running]);
    };
    await clock.run(work());
    const startS: number[] = [];
    const successS: number[] = [];
    const outcomes: Record<string, number> = {};
    const firstStarts: number[] = [];
    for (const { user, at } of fresh) {
      const records = [...store.records.values()].filter((r) => r.user_id === user);
      const head = store.heads.get(user);
      const all = [...records, ...(head ? [head] : [])].sort((a, b) => a.started_at - b.started_at);
      if (!all.length) {
        outcomes['never started'] = (outcomes['never started'] ?? 0) + 1;
        firstStarts.push(Infinity);
        continue;
      }
      const start = all[0];
      firstStarts.push(start.started_at);
      startS.push((start.started_at - at) / 1000);
      const key = `${start.state}${start.error_code ? ` ${start.error_code}` : ''}`;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
      const ok = all.find((a) => a.state === 'succeeded');
      if (ok) successS.push(((ok.finished_at ?? ok.started_at) - at) / 1000);
    }
    let hourlyLateMaxS = 0;
    for (const [user, due] of hourlyDue) {
      const all = [...store.records.values(), ...store.heads.values()].filter(
        (r) => r.user_id === user && r.started_at >= due - 1,
      );
      const startedAt = Math.min(...all.map((a) => a.started_at));
      if (due < T0 + minutes * MINUTE - 2 * MINUTE) hourlyLateMaxS = Math.max(hourlyLateMaxS, (startedAt - due) / 1000);
    }
    // 429s of the address's limits, not the storm's (those are the fault's own).
    const address = [...emulator.addresses.values()][0] ?? { limited: 0 };
    const span = Math.max(1, (Math.max(...sent) - Math.min(...sent)) / MINUTE);
    return {
      n,
      hourlyUsers,
      promisedMinutes,
      startS: { p50: quantile(startS, 0.5), max: startS.length < n ? Infinity : Math.max(...startS) },
      successS: { p50: quantile(successS, 0.5), max: successS.length < n ? Infinity : Math.max(...successS) },
      started: startS.length,
      succeeded: successS.length,
      inOrder: firstStarts.every((t, i) => i === 0 || t >= firstStarts[i - 1]),
      hourlyLateMaxS,
      calls: sent.length,
      perMinuteShare: sent.length / span / ADDRESS_LIMITS.perMinute,
      limited: address.limited,
      outcomes,
      wallS: (performance.now() - began) / 1000,
    };
  } finally {
    globalThis.fetch = realFetch;
    await emulator.close();
  }
}

export function reportSyncFirst(rows: SyncFirstRow[]): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const s = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} s` : 'never');
  out('\nSync: time to first sync (one egress address, defaults; hourly syncs due across the hour beside them)');
  out(
    '  new   promise   first attempt p50 / max   first success p50 / max   started  succeeded  in order  hourly late  429s',
  );
  for (const r of rows)
    out(
      `  ${String(r.n).padEnd(5)} ${`${r.promisedMinutes} min`.padEnd(9)} ${`${s(r.startS.p50)} / ${s(r.startS.max)}`.padEnd(25)} ${`${s(r.successS.p50)} / ${s(r.successS.max)}`.padEnd(25)} ${String(r.started).padEnd(8)} ${String(r.succeeded).padEnd(10)} ${String(r.inOrder).padEnd(9)} ${s(r.hourlyLateMaxS).padEnd(12)} ${r.limited}   ${JSON.stringify(r.outcomes)}`,
    );
}

if (require.main === module) {
  const ns = (process.argv[2] ?? '1,20').split(',').map(Number);
  void (async () => {
    const rows: SyncFirstRow[] = [];
    for (const n of ns) rows.push(await syncFirst({ n, troubled: process.argv[3] === 'troubled' }));
    reportSyncFirst(rows);
  })();
}

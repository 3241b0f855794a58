import { ADDRESS_LIMITS } from '../lib/sync/rate-budget';
import { HOUR, MINUTE, minutes, startSyncSim } from '../test/support/sync-sim';

/**
 * Time to first sync (issue 49's promise): N new connections made at once beside 100 connections
 * already synced (their hourly syncs due across the hour), and, `troubled`, the neighbours the
 * issue names: one account in a long 429 storm due with them and two whose tokens T-Bank refuses.
 * Production's defaults on one virtual clock (test/support/sync-sim.ts): one egress address, real
 * 60 s windows at the emulator, SYNC_CALLS_PER_SYNC 25, SYNC_CALLS_PER_FIRST_SYNC 150, 3 years of
 * history, 25 s steps. Reported per new connection: connection → first attempt started and →
 * first attempt succeeded (p50 / max) against the promise ceil(N × first cost / first share) + 1
 * minutes, whether they started in connection order (by tick), the hourly syncs' lateness against
 * the tick after they were due, the share of the address's per-minute limit used, and 429s.
 */

const T0 = Date.UTC(2026, 11, 4, 12, 0, 30);

export interface SyncFirstRow {
  n: number;
  troubled: boolean;
  promisedMinutes: number;
  startS: { p50: number; max: number };
  successS: { p50: number; max: number };
  started: number;
  succeeded: number;
  inOrder: boolean;
  hourlyLateMaxS: number;
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
const maxOr = (xs: number[], n: number) => (xs.length < n ? Infinity : Math.max(...xs));

export async function syncFirst(opts: { n: number; hourlyUsers?: number; troubled?: boolean }): Promise<SyncFirstRow> {
  const { n, troubled = false } = opts;
  const hourlyUsers = opts.hourlyUsers ?? 100;
  const began = performance.now();
  const sim = await startSyncSim({ start: T0 - HOUR, logLevel: process.env.BENCH_DEBUG ? 'warn' : undefined });
  const { admit } = sim;
  const promisedMinutes = Math.ceil((n * admit.firstCost) / (admit.calls * admit.firstShare)) + 1;
  try {
    const hourlyDue = new Map<string, number>();
    for (let i = 0; i < hourlyUsers; i++) {
      const due = T0 + Math.floor((i * HOUR) / hourlyUsers);
      hourlyDue.set(await sim.synced(`t.hourly${String(i).padStart(4, '0')}`, due), due);
    }
    let lead = 0;
    if (troubled) {
      // Due with the new ones: one storming (every call 429, reset 1 s) from 5 minutes before until 3
      // after; two whose last attempt was refused (TOKEN_INVALID) and whose tokens T-Bank still refuses.
      lead = 5;
      await sim.synced('t.storming0', T0);
      const refused = { state: 'failed' as const, error_code: 'TOKEN_INVALID' };
      for (const i of [1, 2])
        await sim.synced(`t.refused0${i}`, T0 - MINUTE + i, {
          state: 'failed',
          error_code: 'TOKEN_INVALID',
          sections: { operations: refused },
        });
      sim.emulator.faults = {
        '*': { storm: true, resetSeconds: 1, tokens: ['t.storming0'] },
        UsersService: { error: 40003, tokens: ['t.refused01', 't.refused02'] },
      };
      void sim.clock
        .until(T0 + 3 * MINUTE)
        .then(() => (sim.emulator.faults = { UsersService: sim.emulator.faults.UsersService }));
    }
    const fresh: { user: string; at: number }[] = [];
    for (let i = 0; i < n; i++) {
      const at = T0 + i * 5;
      fresh.push({ user: await sim.connect(`t.fresh${String(i).padStart(4, '0')}`, at), at });
    }
    const ticks = minutes(T0 - lead * MINUTE, promisedMinutes + 5 + lead);
    await sim.run(ticks, (counts, at) => {
      if (process.env.BENCH_DEBUG)
        process.stdout.write(`[bench sync-first] ${new Date(at).toISOString()} ${JSON.stringify(counts)}\n`);
    });

    const startS: number[] = [];
    const successS: number[] = [];
    const outcomes: Record<string, number> = {};
    const firstTick: number[] = [];
    for (const { user, at } of fresh) {
      const all = sim.attempts(user);
      const first = all[0];
      const key = first ? `${first.state}${first.error_code ? ` ${first.error_code}` : ''}` : 'never started';
      outcomes[key] = (outcomes[key] ?? 0) + 1;
      firstTick.push(first ? Math.floor(first.started_at / MINUTE) : Infinity);
      if (!first) continue;
      startS.push((first.started_at - at) / 1000);
      const ok = all.find((a) => a.state === 'succeeded');
      if (ok) successS.push(((ok.finished_at ?? ok.started_at) - at) / 1000);
    }
    // An hourly sync is on time when it starts in the tick after it was due.
    let hourlyLateMaxS = 0;
    const last = ticks[ticks.length - 1];
    for (const [user, due] of hourlyDue) {
      if (due > last - 2 * MINUTE) continue;
      const next = sim.attempts(user).find((a) => a.started_at >= due);
      const tickAfter = Math.ceil(due / MINUTE) * MINUTE;
      hourlyLateMaxS = Math.max(hourlyLateMaxS, next ? (next.started_at - tickAfter) / 1000 : Infinity);
    }
    const span = Math.max(1, (Math.max(...sim.sent) - Math.min(...sim.sent)) / MINUTE);
    // 429s of the address's limits (the storm's are the fault's own).
    const limited = [...sim.emulator.addresses.values()].reduce((k, a) => k + a.limited, 0);
    return {
      n,
      troubled,
      promisedMinutes,
      startS: { p50: quantile(startS, 0.5), max: maxOr(startS, n) },
      successS: { p50: quantile(successS, 0.5), max: maxOr(successS, n) },
      started: startS.length,
      succeeded: successS.length,
      inOrder: firstTick.every((t, i) => i === 0 || t >= firstTick[i - 1]),
      hourlyLateMaxS,
      perMinuteShare: sim.sent.length / span / ADDRESS_LIMITS.perMinute,
      limited,
      outcomes,
      wallS: (performance.now() - began) / 1000,
    };
  } finally {
    await sim.close();
  }
}

/** The bench's rows: 1, 20 and 200 new connections alone, then 1 and 20 beside the troubled neighbours. */
export async function syncFirstRows(): Promise<SyncFirstRow[]> {
  const rows: SyncFirstRow[] = [];
  for (const n of [1, 20, 200]) rows.push(await syncFirst({ n }));
  for (const n of [1, 20]) rows.push(await syncFirst({ n, troubled: true }));
  return rows;
}

export function reportSyncFirst(rows: SyncFirstRow[]): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const s = (x: number) => (Number.isFinite(x) ? `${x.toFixed(0)} s` : 'never');
  out('\nSync: time to first sync (one egress address, defaults; 100 hourly syncs due across the hour beside them)');
  out(
    '  new  neighbours  promise  first attempt p50 / max  first success p50 / max  started  in order  hourly late  limit used  429s',
  );
  for (const r of rows)
    out(
      [
        `  ${String(r.n).padEnd(4)}`,
        (r.troubled ? 'storm+2 bad' : 'none').padEnd(11),
        `${r.promisedMinutes} min`.padEnd(8),
        `${s(r.startS.p50)} / ${s(r.startS.max)}`.padEnd(24),
        `${s(r.successS.p50)} / ${s(r.successS.max)}`.padEnd(24),
        `${r.started}/${r.n}`.padEnd(8),
        String(r.inOrder).padEnd(9),
        s(r.hourlyLateMaxS).padEnd(12),
        `${(100 * r.perMinuteShare).toFixed(0)} %`.padEnd(11),
        `${r.limited}  ${JSON.stringify(r.outcomes)}`,
      ].join(' '),
    );
}

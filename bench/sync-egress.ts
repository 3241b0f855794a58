import { newId } from '../lib/ident';
import { ADDRESS_LIMITS, admitPolicy, egressLimits } from '../lib/sync/rate-budget';
import { DEFAULT_SECTION_SETTINGS } from '../lib/sync/sections';
import { HOUR, MINUTE, minutes, startSyncSim } from '../test/support/sync-sim';

/**
 * One hour of the hourly sync with more connections due than one egress address can serve: N
 * connections (5,000) synced before and all due at once, the real tick (admission, spread
 * dispatches), steps, client, pacer and T-Bank emulator over HTTP, the emulator holding limits.md's
 * per-address limits in SLIDING windows of a real minute and a real second (1,000 and 50). A real
 * hour is not waited for: every part reads one virtual clock (test/support/virtual-clock.ts), which
 * jumps to the next sleeper only once nothing else can run and no request is in flight, so each
 * request reaches the emulator at the instant it was sent and every window is counted at full
 * length. The stores are in memory so that the figure is the planning's, not DynamoDB Local's.
 * Reported: calls sent within the hour and their share of the per-minute limit and budget, the most
 * calls in one sliding minute and second, 429s, connections synced per hour, calls per sync.
 */

const T0 = Date.UTC(2026, 11, 4, 12, 0, 0);

export interface SyncEgressRow {
  n: number;
  callsPerSyncSetting: number;
  admitCallsPerMinute: number;
  reserved: number;
  succeeded: number;
  notSucceeded: number;
  deferredLastTick: number;
  stillDue: number;
  /** Calls sent within the hour, and in all (the last attempts finish after it). */
  hourCalls: number;
  calls: number;
  peakMinute: number;
  peakSecond: number;
  limited: number;
  wallS: number;
}

/** The most sends any sliding window [t, t + w) holds. */
function peak(times: number[], w: number): number {
  let best = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i] - times[j] >= w) j++;
    best = Math.max(best, i - j + 1);
  }
  return best;
}

export async function syncEgress(opts: { n?: number; callsPerSync?: number } = {}): Promise<SyncEgressRow> {
  const n = opts.n ?? Number(process.env.BENCH_EGRESS_N ?? 5000);
  // The admission's estimate of an hourly sync (SYNC_CALLS_PER_SYNC): this bench's measured cost.
  const callsPerSync = opts.callsPerSync ?? Number(process.env.BENCH_EGRESS_CALLS_PER_SYNC ?? 16);
  const say = (line: string) => process.stdout.write(`[bench sync-egress] ${line}\n`);
  const admit = admitPolicy(1, MINUTE, callsPerSync, callsPerSync);
  const sim = await startSyncSim({
    start: T0 - HOUR,
    admit,
    settings: { ...DEFAULT_SECTION_SETTINGS, historyDays: 30 },
    inlineMax: Infinity, // one process: no fan-out to invoke
    logLevel: process.env.BENCH_DEBUG ? 'error' : undefined,
  });
  const began = performance.now();
  try {
    // Synced an hour ago (their operations succeeded: hourly syncs), all due at T0 in creation order.
    for (let i = 0; i < n; i++) {
      const user = newId(T0 - HOUR + i);
      await sim.synced(`t.${user}`, T0 - n + i, { started_at: T0 - HOUR - n + i }, user);
    }
    say(`${n} connections due; ${admit.calls} calls a minute admitted at ${callsPerSync} a sync; real windows`);
    let reserved = 0;
    let deferredLastTick = 0;
    await sim.run(minutes(T0, 60), (counts, at) => {
      const minute = Math.round((at - T0) / MINUTE);
      reserved += (counts.first ?? 0) + (counts.due ?? 0);
      deferredLastTick = counts.deferred ?? 0;
      if (minute % 10 === 9 || process.env.BENCH_DEBUG)
        say(`minute ${minute + 1}: ${JSON.stringify(counts)} ${reserved} reserved, ${sim.sent.length} calls`);
    });
    const heads = [...sim.store.heads.values()].filter((h) => h.started_at >= T0);
    const outcomes: Record<string, number> = {};
    for (const h of heads) {
      const key = `${h.state}${h.error_code ? ` ${h.error_code}` : ''}`;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    }
    say(`outcomes: ${JSON.stringify(outcomes)}; steps: ${JSON.stringify(sim.stepResults)}`);
    const address = [...sim.emulator.addresses.values()][0] ?? { peakMinute: 0, peakSecond: 0, limited: 0 };
    const sent = sim.sent;
    return {
      n,
      callsPerSyncSetting: callsPerSync,
      admitCallsPerMinute: admit.calls,
      reserved,
      succeeded: heads.filter((h) => h.state === 'succeeded').length,
      notSucceeded: heads.filter((h) => h.state !== 'succeeded').length,
      deferredLastTick,
      stillDue: n - heads.length,
      hourCalls: sent.filter((t) => t >= T0 && t < T0 + HOUR).length,
      calls: sent.length,
      peakMinute: Math.max(address.peakMinute, peak(sent, MINUTE)),
      peakSecond: Math.max(address.peakSecond, peak(sent, 1000)),
      limited: address.limited,
      wallS: (performance.now() - began) / 1000,
    };
  } finally {
    await sim.close();
  }
}

export function reportSyncEgress(r: SyncEgressRow): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const budget = egressLimits(1);
  const perMinute = r.hourCalls / 60;
  const pct = (x: number) => `${((100 * perMinute) / x).toFixed(1)} %`;
  out('\nSync: one hour against one egress address (T-Bank stand-in: sliding real minutes and seconds)');
  out(`  connections due at once             ${r.n} (synced before: hourly syncs)`);
  out(
    `  address limit / our budget          ${ADDRESS_LIMITS.perMinute}/min ${ADDRESS_LIMITS.perSecond}/s; ${budget.perMinute}/min ${budget.perSecond}/s`,
  );
  out(`  calls in the hour                   ${r.hourCalls} (${perMinute.toFixed(0)} a minute)`);
  out(`  share of the limit / of the budget  ${pct(ADDRESS_LIMITS.perMinute)} / ${pct(budget.perMinute)}`);
  out(`  most calls in one sliding minute    ${r.peakMinute} (limit ${ADDRESS_LIMITS.perMinute})`);
  out(`  most calls in one sliding second    ${r.peakSecond} (limit ${ADDRESS_LIMITS.perSecond})`);
  out(`  429 answers for the address         ${r.limited}`);
  out(`  calls admitted a minute             ${r.admitCallsPerMinute} (SYNC_CALLS_PER_SYNC ${r.callsPerSyncSetting})`);
  out(
    `  connections synced in the hour      ${r.succeeded} succeeded of ${r.reserved} started (${r.notSucceeded} not succeeded)`,
  );
  out(`  calls per started sync (measured)   ${(r.calls / Math.max(1, r.reserved)).toFixed(1)}`);
  out(`  deferred at the last tick           ${r.deferredLastTick}; never started in the hour: ${r.stillDue}`);
  out(`  wall (virtual hour)                 ${r.wallS.toFixed(0)} s`);
}

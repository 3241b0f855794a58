import { BrokerageEmulator } from '../emulator/brokerage/emulator';
import { newId } from '../lib/ident';
import { silentLogger } from '../lib/log';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../lib/secrets/sealer';
import { ConnectionService } from '../lib/sync/connections';
import { MemorySyncDataStore } from '../test/support/memory-sync-data-store';
import { ADDRESS_LIMITS, admissionsPerMinute, egressLimits } from '../lib/sync/rate-budget';
import { DEFAULT_SECTION_SETTINGS } from '../lib/sync/sections';
import { HourlyService } from '../lib/sync/service';
import { Dispatch, runStep } from '../lib/sync/step';
import { tick } from '../lib/sync/tick';
import { MemorySyncStore } from '../test/unit/sync/memory-sync-store';

/**
 * One hour of the hourly sync with more connections due than one egress
 * address can serve: N connections (5,000) all due at once, the real tick,
 * steps, client, call budgets and T-Bank emulator, the emulator holding
 * limits.md's per-address limits (1,000 a minute, 50 a second). The "minute"
 * is scaled (`BENCH_EGRESS_WINDOW_MS`, 5 s: the budget and the emulator alike; shorter ones overload one process, whose event-loop lag then carries calls into the next window)
 * and the hour is its 60 ticks (the clock runs a minute per window for ticks
 * and steps alike, so the steps' 15-minute bound is 15 windows); the stores are in memory so that the figure
 * is the planning's, not DynamoDB Local's. Reported: the most calls the
 * address saw in one minute and one second (never over the limits), 429s,
 * connections synced in the hour (per address), calls per sync, and the
 * connections deferred.
 */

const keyring = new SecretSealer(parseKeyring(newKeyringEntry('bench')).keyring!);
const T0 = Date.UTC(2026, 11, 4, 12, 0, 0);
const MINUTE = 60_000;

export interface SyncEgressRow {
  n: number;
  windowMs: number;
  admitPerMinute: number;
  callsPerSyncSetting: number;
  reserved: number;
  succeeded: number;
  notSucceeded: number;
  deferredLastTick: number;
  stillDue: number;
  calls: number;
  peakMinute: number;
  peakSecond: number;
  limited: number;
  wallS: number;
}

export async function syncEgress(
  opts: { n?: number; windowMs?: number; callsPerSync?: number } = {},
): Promise<SyncEgressRow> {
  const n = opts.n ?? Number(process.env.BENCH_EGRESS_N ?? 5000);
  const windowMs = opts.windowMs ?? Number(process.env.BENCH_EGRESS_WINDOW_MS ?? 5000);
  const callsPerSync = opts.callsPerSync ?? 25;
  const say = (line: string) => process.stdout.write(`[bench sync-egress] ${line}\n`);
  const emulator = new BrokerageEmulator({ windowMs, addressLimits: ADDRESS_LIMITS });
  const url = await emulator.listen();
  const store = new MemorySyncStore();
  const hourly = new HourlyService({ store, waitBoundMs: 15 * MINUTE });
  const connections = new ConnectionService({ store, sealer: async () => keyring });
  const data = new MemorySyncDataStore();
  // A scaled clock: one window of real time is one minute of the hour (ticks and steps alike).
  let began = Infinity;
  const now = () => (began === Infinity ? T0 : T0 + Math.round(((performance.now() - began) * MINUTE) / windowMs));
  const running = new Set<Promise<unknown>>();
  const results: Record<string, number> = {};
  const dispatch: Dispatch = async (input) => {
    const p = runStep(
      {
        hourly,
        dispatch,
        connections,
        data,
        tbank: { baseUrl: url, appName: 'bench', rateWindowMs: windowMs, egressAddresses: 1, backoffMs: 20 },
        settings: { ...DEFAULT_SECTION_SETTINGS, historyDays: 30 },
        timeoutMs: 20_000,
        now,
        log: silentLogger,
      },
      input,
    ).then(
      (r) => (results[r] = (results[r] ?? 0) + 1),
      (err: unknown) => {
        results.threw = (results.threw ?? 0) + 1;
        if (results.threw === 1) process.stderr.write(`[bench sync-egress] a step threw: ${String(err)}\n`);
      },
    );
    running.add(p);
    void p.finally(() => running.delete(p));
  };
  try {
    for (let i = 0; i < n; i++) {
      const user = newId(T0 - MINUTE + i);
      await connections.putConnection(user, `t.${user}`, T0 - MINUTE + i); // due in creation order
    }
    const admit = admissionsPerMinute(1, callsPerSync);
    say(`${n} connections due; ${admit} attempts a minute; minute = ${windowMs} ms`);
    began = performance.now();
    let reserved = 0;
    let deferredLastTick = 0;
    for (let minute = 0; minute < 60; minute++) {
      // Each simulated minute starts on its scaled window: the budget and the emulator count real time.
      const wait = began + minute * windowMs - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const counts = await tick({
        hourly,
        connections,
        dispatch,
        admit,
        now,
        log: silentLogger,
        run: { run_id: newId(), run_deadline: now() + 55_000 },
        inlineMax: Infinity, // one process: no fan-out to invoke
      });
      reserved += (counts.first ?? 0) + (counts.due ?? 0);
      deferredLastTick = counts.deferred ?? 0;
      if (minute % 10 === 9) say(`minute ${minute + 1}: ${reserved} reserved, ${deferredLastTick} deferred`);
    }
    while (running.size) await Promise.all([...running]);
    const wallS = (performance.now() - began) / 1000;
    const heads = [...store.heads.values()];
    const outcomes: Record<string, number> = {};
    for (const h of heads) {
      const key = `${h.state}${h.error_code ? ` ${h.error_code}` : ''}`;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    }
    say(`outcomes: ${JSON.stringify(outcomes)}; steps: ${JSON.stringify(results)}`);
    const address = [...emulator.addresses.values()][0] ?? { peakMinute: 0, peakSecond: 0, limited: 0 };
    return {
      n,
      windowMs,
      admitPerMinute: admit,
      callsPerSyncSetting: callsPerSync,
      reserved,
      succeeded: heads.filter((h) => h.state === 'succeeded').length,
      notSucceeded: heads.filter((h) => h.state !== 'succeeded').length,
      deferredLastTick,
      stillDue: n - heads.length,
      calls: Object.values(emulator.calls).reduce((a, b) => a + b, 0),
      peakMinute: address.peakMinute,
      peakSecond: address.peakSecond,
      limited: address.limited,
      wallS,
    };
  } finally {
    await emulator.close();
  }
}

export function reportSyncEgress(r: SyncEgressRow): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const budget = egressLimits(1);
  out('\nSync: one hour against one egress address (T-Bank emulator holding limits.md’s per-address limits)');
  out(`  connections due at once             ${r.n}`);
  out(`  "minute" (scaled)                   ${r.windowMs} ms; the hour = 60 ticks`);
  out(
    `  address limit / our budget          ${ADDRESS_LIMITS.perMinute}/min ${ADDRESS_LIMITS.perSecond}/s; ${budget.perMinute}/min ${budget.perSecond}/s`,
  );
  out(`  most calls seen in one minute       ${r.peakMinute} (limit ${ADDRESS_LIMITS.perMinute})`);
  out(
    `  most calls seen in one second       ${r.peakSecond} (limit ${ADDRESS_LIMITS.perSecond}, a 60th of the window)`,
  );
  out(`  429 answers for the address         ${r.limited}`);
  out(`  attempts started a minute (admit)   ${r.admitPerMinute} (SYNC_CALLS_PER_SYNC ${r.callsPerSyncSetting})`);
  out(
    `  connections synced in the hour      ${r.succeeded} succeeded of ${r.reserved} started (${r.notSucceeded} not succeeded)`,
  );
  out(`  calls per started sync (measured)   ${(r.calls / Math.max(1, r.reserved)).toFixed(1)}`);
  out(`  deferred at the last tick           ${r.deferredLastTick}; never started in the hour: ${r.stillDue}`);
  out(`  wall                                ${r.wallS.toFixed(0)} s`);
}

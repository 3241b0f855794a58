import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { createAwsClients, TOOL_DYNAMODB_LIMITS } from '../lib/aws/clients';
import { batchWriteAll, putRequest } from '../lib/aws/batch';
import { newId } from '../lib/ident';
import { silentLogger } from '../lib/log';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../lib/secrets/sealer';
import { ConnectionService, tokenContext } from '../lib/sync/connections';
import { DynamoSyncStore } from '../lib/sync/dynamodb-store';
import { connectionItem, DUE_SHARDS, headFromItem, headItem } from '../lib/sync/keys';
import { HOUR_MS, HourlyHead } from '../lib/sync/model';
import { HourlyService } from '../lib/sync/service';
import { Dispatch, INLINE_MAX, tick, tickShard, TickDeps } from '../lib/sync/tick';
import { planResources } from '../tools/stack/resources';
import { BenchStack } from './support';

/**
 * The minute tick over N connections on DynamoDB Local, with the due index.
 * Seeded (batch writes) as a steady state: every user has a settled head whose
 * start is spread evenly over the last hour, so its due time is spread evenly
 * over the next one. Time is an injected clock; ticks run back to back.
 *  - idle: a tick before anything is due: its calls / N (target 0);
 *  - due: ticks minute by minute: the tick's own DynamoDB calls and ms per due
 *    connection, and the wall time of the busiest tick (fan-out: the shard
 *    ticks run in parallel in this process, as parallel invocations would);
 *  - the 62-minute check: after ticks at minutes 0..62 every user has an
 *    attempt started within 62 minutes of its last start.
 * The full 62 minutes run for `full` sizes (10,000); larger ones run `sampleMinutes`
 * ticks and check the users those minutes covered. Steps are a fake dispatch
 * that writes their rows through the service on an uncounted client: the
 * steps' cost is theirs.
 */

const keyring = new SecretSealer(parseKeyring(newKeyringEntry('bench')).keyring!);
const sealer = async () => keyring;
const T0 = Date.UTC(2026, 11, 3, 12, 0, 0);
const MINUTE = 60_000;

export interface SyncTickRow {
  n: number;
  seedMs: number;
  idleCalls: number;
  minutes: number;
  ticks: Array<{ minute: number; due: number; calls: number; ms: number; fannedOut: number }>;
  reserved: number;
  covered: number;
  /** Heads whose due entry is at most an hour after their latest start. */
  entriesOk: number;
  maxLagMin: number;
}

export async function syncTick(
  bench: BenchStack,
  opts: { full?: number[]; sampled?: number[]; sampleMinutes?: number } = {},
): Promise<SyncTickRow[]> {
  // BENCH_SYNC_FULL / BENCH_SYNC_SAMPLED (comma-separated sizes) for a quick run.
  // An empty value runs no size of that kind.
  const sizesFrom = (name: string, fallback: number[]) => {
    const value = process.env[name];
    return value === undefined ? fallback : value.split(',').filter(Boolean).map(Number);
  };
  const full = opts.full ?? sizesFrom('BENCH_SYNC_FULL', [10_000]);
  const sampled = opts.sampled ?? sizesFrom('BENCH_SYNC_SAMPLED', [100_000]);
  const sampleMinutes = opts.sampleMinutes ?? 1;
  const say = (line: string) => process.stdout.write(`[bench sync] ${line}\n`);
  const template = planResources(bench.stack.definition.resources.Resources).tables.find(
    (t) => t.logicalId === 'SyncTable',
  )!;
  // The tick's own client, counted; the seeding and the fake steps use the bench's, uncounted.
  const counted = createAwsClients(bench.config, TOOL_DYNAMODB_LIMITS);
  let calls = 0;
  counted.documents.middlewareStack.add((next) => async (args) => (calls++, next(args)), {
    step: 'initialize',
    name: 'benchCountTickCalls',
  });

  const rows: SyncTickRow[] = [];
  // A full run ticks minutes 0..62; a sampled one minutes 1..sampleMinutes (minute 0 takes only the user due at T0).
  const sizes = [
    ...full.map((n) => ({ n, first: 0, minutes: 63 })),
    ...sampled.map((n) => ({ n, first: 1, minutes: sampleMinutes })),
  ];
  try {
    for (const { n, first, minutes } of sizes) {
      const TableName = `${template.create.TableName}-bench-tick-${n}`;
      await bench.aws.dynamodb.send(new CreateTableCommand({ ...template.create, TableName }));
      try {
        rows.push(await runSize(n, first, minutes, TableName));
      } finally {
        await bench.aws.dynamodb.send(new DeleteTableCommand({ TableName }));
      }
    }
  } finally {
    counted.dynamodb.destroy();
  }
  return rows;

  async function runSize(n: number, first: number, minutes: number, table: string): Promise<SyncTickRow> {
    const tickStore = new DynamoSyncStore({ documents: counted.documents, table });
    const stepStore = new DynamoSyncStore({ documents: bench.aws.documents, table });
    const hourly = new HourlyService({ store: tickStore, waitBoundMs: 15 * MINUTE });
    const steps = new HourlyService({ store: stepStore, waitBoundMs: 15 * MINUTE });
    const connections = new ConnectionService({ store: tickStore, sealer });
    let clock = T0 - MINUTE;

    // Seed: a connection and a settled head per user, last starts spread evenly over [T0 - 1 h, T0).
    const seedBegan = performance.now();
    const lastStart = new Map<string, number>();
    const CHUNK = 2_000;
    for (let i = 0; i < n; i += CHUNK) {
      const requests: ReturnType<typeof putRequest>[] = [];
      for (let j = i; j < Math.min(n, i + CHUNK); j++) {
        const user = newId();
        const started = T0 - HOUR_MS + Math.floor((j * HOUR_MS) / n);
        lastStart.set(user, started);
        const head: HourlyHead = {
          user_id: user,
          attempt_id: newId(started),
          state: 'succeeded',
          started_at: started,
          finished_at: started + 5_000,
          run_id: 'seed',
          run_deadline: started + 55_000,
          walk_completed: true,
          children: {},
          revision: 2,
          due_at: started + HOUR_MS,
        };
        requests.push(putRequest(connectionItem(user, await keyring.seal(`t.${user}`, tokenContext(user)), started)));
        requests.push(putRequest(headItem(head)));
      }
      // Eight batch writers at once: DynamoDB Local takes them in parallel.
      const slices = Array.from({ length: 8 }, (_, k) => requests.filter((_, r) => Math.floor(r / 25) % 8 === k));
      await Promise.all(slices.map((slice) => batchWriteAll(bench.aws.documents, table, slice)));
      if ((i + CHUNK) % 20_000 === 0 || i + CHUNK >= n) say(`N=${n}: seeded ${Math.min(n, i + CHUNK)} users`);
    }
    const seedMs = performance.now() - seedBegan;

    // Steps run on their own, as async invokes do (their own client): row, finish, settle at the barrier.
    let running: Promise<unknown>[] = [];
    const dispatch: Dispatch = async (input) => {
      const row = { attempt_id: input.attempt_id, step_id: input.step_id, section: input.section };
      running.push(
        (async () => {
          await steps.startStep(input.user_id, { ...row, state: 'running', started_at: clock });
          await steps.finishStep(input.user_id, row, 'succeeded', clock);
          await steps.settleHourly(input.user_id, input.attempt_id, clock);
        })().catch(() => undefined), // a step racing its attempt's settle is refused by the fence, by design
      );
    };
    const deps = (): TickDeps => ({
      hourly,
      connections,
      dispatch,
      now: () => clock,
      log: silentLogger,
      // A simulated minute is as long as it takes: the run's deadline moves with the injected clock.
      run: { run_id: newId(), run_deadline: clock + 55_000 },
      fanOut: async (shard) => void fanned.push(tickShard(deps(), shard)),
    });
    let fanned: Promise<unknown>[] = [];

    // Idle: nothing is due a minute before T0.
    calls = 0;
    await tick(deps());
    const idleCalls = calls;
    say(`N=${n}: idle tick ${idleCalls} calls`);

    const ticks: SyncTickRow['ticks'] = [];
    for (let minute = first; minute < first + minutes; minute++) {
      clock = T0 + minute * MINUTE;
      calls = 0;
      fanned = [];
      const began = performance.now();
      const counts = await tick(deps());
      const shardCounts = (await Promise.all(fanned)) as Array<Record<string, number>>;
      const ms = performance.now() - began;
      await Promise.all(running); // the steps finish before the next minute's tick
      running = [];
      const due = [counts, ...shardCounts].reduce(
        (sum, c) => sum + Object.entries(c).reduce((s, [k, v]) => (k === 'fanned_out' ? s : s + v), 0),
        0,
      );
      ticks.push({ minute, due, calls, ms, fannedOut: counts.fanned_out ?? 0 });
      if (minute % 10 === 0 || minute === first + minutes - 1)
        say(`N=${n}: minute ${minute}: ${due} due, ${calls} calls, ${ms.toFixed(0)} ms`);
    }

    // Every user whose last start + 62 min falls inside the simulated window has a newer attempt by then.
    const horizon = T0 + (first + minutes - 1) * MINUTE;
    let reserved = 0;
    let entriesOk = 0;
    let covered = 0;
    let maxLag = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const page = await bench.aws.documents.send(
        new ScanCommand({
          TableName: table,
          FilterExpression: 'SK = :h',
          ExpressionAttributeValues: { ':h': 'HOURLY' },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        const head = headFromItem(item);
        const last = lastStart.get(head.user_id)!;
        // Every head's entry is due no later than an hour after its latest start (the tick takes it that minute).
        if (head.due_at !== undefined && head.due_at <= head.started_at + HOUR_MS) entriesOk++;
        if (last + HOUR_MS > horizon) continue; // not due inside the simulated minutes
        covered++;
        if (head.started_at > last) {
          reserved++;
          maxLag = Math.max(maxLag, firstRestart(head, last));
        }
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return { n, seedMs, idleCalls, minutes, ticks, reserved, covered, entriesOk, maxLagMin: maxLag / MINUTE };
  }
}

/**
 * The lag between the seeded start and the next attempt: the head holds the
 * latest attempt; a user reserved twice inside the window (at most the first
 * two minutes' users) was reserved first an hour before it.
 */
function firstRestart(head: HourlyHead, last: number): number {
  const lag = head.started_at - last;
  return lag > 62 * MINUTE ? lag - HOUR_MS : lag;
}

export function reportSyncTick(rows: SyncTickRow[]): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out('\nSync: the minute tick over the due index (DynamoDB Local; due times spread evenly over the hour)');
  out(`  shards ${DUE_SHARDS}, inline visits per tick ≤ ${INLINE_MAX}, more fan out to one shard tick per shard`);
  out('  before (the tick paged every connection): ~4 DynamoDB calls per idle connection per minute');
  out(
    '  N        seed s  idle calls  calls/idle conn  ticks  due/tick  calls/due  ms/due  busiest tick ms  fanned out  owed  reserved  max lag min  entries ≤ start+60',
  );
  for (const r of rows) {
    const busy = r.ticks.filter((t) => t.due > 0);
    const due = busy.reduce((s, t) => s + t.due, 0);
    const calls = busy.reduce((s, t) => s + t.calls, 0);
    const ms = busy.reduce((s, t) => s + t.ms, 0);
    const busiest = busy.reduce((m, t) => (t.ms > m.ms ? t : m), busy[0] ?? { ms: 0, due: 0, fannedOut: 0 });
    out(
      `  ${String(r.n).padEnd(8)} ${(r.seedMs / 1000).toFixed(0).padStart(6)}  ${String(r.idleCalls).padStart(10)}  ${(r.idleCalls / r.n).toFixed(5).padStart(15)}  ${String(r.ticks.length).padStart(5)}  ${(due / Math.max(1, busy.length)).toFixed(0).padStart(8)}  ${(calls / Math.max(1, due)).toFixed(1).padStart(9)}  ${(ms / Math.max(1, due)).toFixed(2).padStart(6)}  ${busiest.ms.toFixed(0).padStart(15)}  ${String(busiest.fannedOut).padStart(10)}  ${String(r.covered).padStart(4)}  ${String(r.reserved).padStart(8)}  ${r.maxLagMin.toFixed(1).padStart(11)}  ${`${r.entriesOk}/${r.n}`.padStart(17)}`,
    );
  }
  out(
    '  owed: users due (last start + 60 min) inside the simulated minutes: all N for a full 63-minute run; a sampled size checks the users its minutes covered',
  );
  out(
    '  reserved: owed users with a newer attempt; max lag: the longest time from a last start to the next (must be ≤ 62)',
  );
  out(
    '  entries ≤ start+60: every user (all N, sampled sizes too) is in the index due at most an hour after its last start',
  );
}

import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect } from 'nats';
import { natsOptions } from '../lib/nats/connection';
import { scanOnce } from '../emulator/scanner/scanner';
import { planResources } from '../tools/stack/resources';
import { loadScanConfig } from '../lib/scan/config';
import { silentLogger } from '../lib/log';
import { publishWithRetries } from '../lib/nats/publish';
import { S3ScanFiles } from '../lib/scan/s3-files';
import { GatewayDeps, handleRequest, pollUntil } from '../lib/scan/gateway';
import { LocalHotFolder } from '../lib/scan/hotfolder';
import { SmbHotFolder } from '../lib/scan/smb-hotfolder';
import { startSamba } from '../test/support/samba';
import { DynamoDbScanJobStore } from '../lib/scan/dynamodb-store';
import { ContentAiNormalizer } from '../lib/scan/normalizer';
import { BenchStack } from './support';

/**
 * The gateway's own cost, as a ratio to the settle window (the wait the
 * design imposes): per job, end-to-end latency minus the settle window (the
 * emulator's own time, Input/ → answered, is printed apart); and 100 jobs
 * through SCAN_MAX_INFLIGHT slots, on the local folder and on a Samba share.
 * Real clock; polls every 100 ms; the emulator's loop runs every 20 ms with no delay.
 */
const SETTLE_MS = 1000;
const POLL_MS = 100;
const FIXTURES = path.resolve(__dirname, '../fixtures/ocr');

/** Wraps every method of `target` so the time spent in each is summed under `label.method`. */
type OnCall = (name: string, args: unknown[], began: number, ended: number) => void;

function timed<T extends object>(
  target: T,
  label: string,
  stats: Map<string, { calls: number; ms: number }>,
  onCall?: OnCall,
): T {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      const value = Reflect.get(obj, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const began = performance.now();
        try {
          return await value.apply(obj, args);
        } finally {
          const s = stats.get(`${label}.${String(prop)}`) ?? { calls: 0, ms: 0 };
          s.calls++;
          const ended = performance.now();
          s.ms += ended - began;
          stats.set(`${label}.${String(prop)}`, s);
          onCall?.(`${label}.${String(prop)}`, args, began, ended);
        }
      };
    },
  });
}

export async function scanGateway(bench: BenchStack) {
  // Timings are absolute ms on a shared machine: the load average says how much to trust them.
  const loadBefore = os.loadavg()[0];
  const stats = new Map<string, { calls: number; ms: number }>();
  // Per-job milestones, to see which phase of the pipeline the time goes to.
  const marks = new Map<string, Record<string, number>>();
  const mark = (job: string, what: string, at: number) => {
    const m = marks.get(job) ?? {};
    m[what] ??= at;
    marks.set(job, m);
  };
  const onCall: OnCall = (name, args, _began, ended) => {
    if (name === 'hotFolder.put') mark(String(args[0]).slice(0, 36), 'in_input', ended);
    if (name === 'jobs.recordPoll' && (args[1] as { settle?: unknown }).settle)
      // The settle window runs from the state's own first_seen_at (epoch ms), not from when it was saved.
      mark(
        (args[0] as { job_id: string }).job_id,
        'first_seen',
        ended - (Date.now() - (args[1] as { settle: { first_seen_at: number } }).settle.first_seen_at),
      );
    if (name === 'files.writeRaw') mark(String(args[0]).slice(4, 40), 'settled', _began);
  };
  const template = planResources(bench.stack.definition.resources.Resources).tables.find(
    (t) => t.logicalId === 'ScanTable',
  )!;
  const TableName = `${template.create.TableName}-bench`;
  await bench.aws.dynamodb.send(new CreateTableCommand({ ...template.create, TableName }));
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-scan-'));
  fs.mkdirSync(path.join(root, 'Input'));
  const nc = await connect(natsOptions(bench.config.nats, 'bench'));
  const subject = `scan.results.bench.${randomUUID()}`;
  const finished = new Map<string, number>();
  nc.subscribe(subject, {
    callback: (_e, m) => {
      const e = JSON.parse(new TextDecoder().decode(m.data));
      if (e.status !== 'processing') finished.set(e.job_id, performance.now());
    },
  });
  const config = {
    ...loadScanConfig({
      SCAN_HOTFOLDER_ROOT: root,
      SCAN_RESULT_SUBJECT: subject,
      SCAN_SETTLE_SECONDS: String(SETTLE_MS / 1000),
      SCAN_POLL_SECONDS: String(POLL_MS / 1000),
    }),
    bucket: bench.config.buckets.files,
  };
  const deps: GatewayDeps = {
    jobs: timed(new DynamoDbScanJobStore(bench.aws.documents, TableName), 'jobs', stats, onCall),
    files: timed(new S3ScanFiles(bench.aws.s3, config.bucket), 'files', stats, onCall),
    hotFolder: timed(new LocalHotFolder(root), 'hotFolder', stats, onCall),
    publish: timed(
      { publish: (s: string, d: string, id: string) => publishWithRetries(nc, s, d, id, 3) },
      'nats',
      stats,
    ).publish,
    normalizer: new ContentAiNormalizer(0.8),
    config,
    service: { name: 'bench', version: '0' },
    now: Date.now,
    log: silentLogger,
  };
  const request = await benchRequests(bench, config.bucket);

  // Emulator and poller run as the deployed ones would: on their own, in loops.
  const startLoops = (d: GatewayDeps, hotRoot: string) => {
    let running = true;
    const loops = Promise.all([
      (async () => {
        while (running) {
          for (const job of await scanOnce({ root: hotRoot, fixturesDir: FIXTURES }))
            mark(job, 'answered', performance.now());
          await new Promise((r) => setTimeout(r, 20));
        }
      })(),
      // The deployed poller: pollUntil (passes at most POLL_MS apart, woken early by an answer or a due settle window), re-fired when idle.
      (async () => {
        while (running) {
          await pollUntil(d, Date.now() + 60_000);
          await new Promise((r) => setTimeout(r, POLL_MS));
        }
      })(),
    ]);
    return async () => {
      running = false;
      await loops;
    };
  };
  let stopLoops = startLoops(deps, root);
  const until = async (cond: () => boolean) => {
    while (!cond()) await new Promise((r) => setTimeout(r, 5));
  };

  try {
    const latencies: number[] = [];
    const singles: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = request();
      singles.push(r.job_id);
      const began = performance.now();
      mark(r.job_id, 'requested', began);
      await handleRequest(deps, JSON.stringify(r));
      await until(() => finished.has(r.job_id));
      mark(r.job_id, 'published', finished.get(r.job_id)!);
      latencies.push(finished.get(r.job_id)! - began);
    }
    const phases = phasesOf(marks, singles);
    latencies.sort((a, b) => a - b);
    const singleMedian = latencies[5];
    const single = new Map(stats);
    stats.clear();

    const batch = Array.from({ length: 100 }, request);
    const began = performance.now();
    await Promise.all(
      batch.map(async (r) => {
        mark(r.job_id, 'requested', performance.now());
        await handleRequest(deps, JSON.stringify(r));
      }),
    );
    const burst = performance.now() - began;
    await until(() => batch.every((r) => finished.has(r.job_id)));
    const total = performance.now() - began;
    for (const r of batch) mark(r.job_id, 'published', finished.get(r.job_id)!);
    const batchIds = batch.map((r) => r.job_id);
    const batchPhases = phasesOf(marks, batchIds, { skipFirst: true });
    // The k-th start uses the slot the (k - slots)-th finish gave back: the gap is the handover.
    const starts = batchIds.map((id) => marks.get(id)!.in_input).sort((a, b) => a - b);
    const ends = batchIds.map((id) => finished.get(id)!).sort((a, b) => a - b);
    const handovers = starts.slice(config.maxInflight).map((s, k) => s - ends[k]);
    const handover = `${median(handovers).toFixed(0)} ms (mean ${(handovers.reduce((a, b) => a + b, 0) / handovers.length).toFixed(0)}, p90 ${quantile(handovers, 0.9).toFixed(0)})`;
    const firstSlotsFull = starts[config.maxInflight - 1] - began;
    const batchStats = new Map(stats);
    await stopLoops();

    // The same 100 jobs through a real Samba share (one long-lived smbclient session).
    stats.clear();
    const sambaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-samba-'));
    const share = await startSamba(sambaDir);
    const smbFolder = new SmbHotFolder({ ...share, timeoutMs: 30_000 });
    const smbDeps: GatewayDeps = {
      ...deps,
      hotFolder: timed(smbFolder, 'hotFolder', stats, onCall),
    };
    stopLoops = startLoops(smbDeps, share.root);
    let smbTotal: number;
    try {
      const smbBatch = Array.from({ length: 100 }, request);
      const smbBegan = performance.now();
      await Promise.all(smbBatch.map((r) => handleRequest(smbDeps, JSON.stringify(r))));
      await until(() => smbBatch.every((r) => finished.has(r.job_id)));
      smbTotal = performance.now() - smbBegan;
    } finally {
      await stopLoops();
      stopLoops = async () => undefined;
      smbFolder.close();
      await share.service.stop();
      fs.rmSync(sambaDir, { recursive: true, force: true });
    }
    return {
      median: singleMedian,
      scannerMs: median(singles.map((id) => marks.get(id)!.answered - marks.get(id)!.in_input)),
      overhead: singleMedian - SETTLE_MS,
      total,
      smbTotal,
      inflight: config.maxInflight,
      single,
      batch: batchStats,
      smb: new Map(stats),
      phases,
      burst,
      batchPhases,
      handover,
      firstSlotsFull,
      load: [loadBefore, os.loadavg()[0]],
    };
  } finally {
    await stopLoops();
    await nc.close();
    fs.rmSync(root, { recursive: true, force: true });
    await bench.aws.dynamodb.send(new DeleteTableCommand({ TableName }));
  }
}

const PHASES = ['requested', 'in_input', 'answered', 'first_seen', 'settled', 'published'];

/** Median of each phase over `jobs` (skipFirst: not requested → in_input, which in a burst is the queue). */
function phasesOf(
  marks: Map<string, Record<string, number>>,
  jobs: string[],
  options: { skipFirst?: boolean } = {},
): Record<string, string> {
  const phases: Record<string, string> = {};
  for (let i = options.skipFirst ? 2 : 1; i < PHASES.length; i++) {
    const spans = jobs
      .map((id) => marks.get(id) ?? {})
      .filter((m) => m[PHASES[i]] && m[PHASES[i - 1]])
      .map((m) => m[PHASES[i]] - m[PHASES[i - 1]]);
    const mean = spans.reduce((a, b) => a + b, 0) / spans.length;
    phases[`${PHASES[i - 1]} → ${PHASES[i]}`] =
      `${median(spans).toFixed(0)}${options.skipFirst ? ` (mean ${mean.toFixed(0)}, p90 ${quantile(spans, 0.9).toFixed(0)})` : ''}`;
  }
  return phases;
}

/** Uploads the bench's input once and answers a maker of fresh scan requests for it (a new job each). */
export async function benchRequests(bench: BenchStack, bucket: string) {
  const key = `bench/${randomUUID()}/aep_6.pdf`;
  await bench.aws.s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: fs.readFileSync(path.join(FIXTURES, 'inputs', 'aep_6.pdf')),
    }),
  );
  return () => ({
    schema_version: '1.0',
    job_id: randomUUID(),
    file_id: randomUUID(),
    attempt: 1,
    pipeline: 'image',
    s3: { bucket, key },
    original_name: 'aep_6.pdf',
    reply_deadline: new Date(Date.now() + 600_000).toISOString(),
  });
}

function median(values: number[]): number {
  return quantile(values, 0.5);
}

export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length * q)] ?? NaN;
}

export function reportScanGateway(r: Awaited<ReturnType<typeof scanGateway>>): void {
  process.stdout.write(
    `\nScan gateway (settle window ${SETTLE_MS} ms, polls every ${POLL_MS} ms, emulator delay 0; ` +
      `load average ${r.load.map((l) => l.toFixed(1)).join(' → ')} on ${os.cpus().length} CPUs)\n`,
  );
  process.stdout.write(
    `  one job, median of 10: ${r.median.toFixed(0)} ms end to end; gateway overhead ${r.overhead.toFixed(0)} ms = x${(r.overhead / SETTLE_MS).toFixed(2)} of the settle window` +
      ` (x${((r.overhead - r.scannerMs) / SETTLE_MS).toFixed(2)} without the emulator's median ${r.scannerMs.toFixed(0)} ms)\n`,
  );
  process.stdout.write(
    `  100 jobs, ${r.inflight} in flight: ${(r.total / 1000).toFixed(1)} s = x${(r.total / SETTLE_MS).toFixed(1)} settle windows; ${(100 / (r.total / 1000)).toFixed(1)} jobs/s ` +
      `(the slot-bound ideal is x${(100 / r.inflight).toFixed(0)})\n`,
  );
  process.stdout.write(
    `  100 jobs through a Samba share: ${(r.smbTotal / 1000).toFixed(1)} s = x${(r.smbTotal / SETTLE_MS).toFixed(1)} settle windows\n`,
  );
  process.stdout.write(
    `  one job, median per phase: ${Object.entries(r.phases)
      .map(([k, v]) => `${k} ${v} ms`)
      .join('; ')}\n`,
  );
  process.stdout.write(
    `  100 jobs: all requests acknowledged after ${r.burst.toFixed(0)} ms; ${r.inflight} slots busy after ${r.firstSlotsFull.toFixed(0)} ms; ` +
      `slot handover (a result published → the next file in Input/) ${r.handover}\n`,
  );
  process.stdout.write(
    `  100 jobs, median per phase: ${Object.entries(r.batchPhases)
      .map(([k, v]) => `${k} ${v} ms`)
      .join('; ')}\n`,
  );
  for (const [title, stats] of [
    ['10 single jobs', r.single],
    ['100 jobs', r.batch],
    ['100 jobs, SMB', r.smb],
  ] as const) {
    process.stdout.write(`  where the time goes, ${title} (calls, total ms, ms per call):\n`);
    for (const [name, s] of [...stats].sort((a, b) => b[1].ms - a[1].ms)) {
      process.stdout.write(
        `    ${name.padEnd(28)} ${String(s.calls).padStart(6)} ${s.ms.toFixed(0).padStart(8)} ${(s.ms / s.calls).toFixed(1).padStart(7)}\n`,
      );
    }
  }
}

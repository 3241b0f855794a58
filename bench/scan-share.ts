import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
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
import type { HotFolder } from '../lib/scan/hotfolder';
import { LocalHotFolder } from '../lib/scan/hotfolder';
import { SmbHotFolder } from '../lib/scan/smb-hotfolder';
import { startSamba } from '../test/support/samba';
import { DynamoDbScanJobStore } from '../lib/scan/dynamodb-store';
import { ContentAiNormalizer } from '../lib/scan/normalizer';
import type { BenchStack } from './support';
import { benchRequests, quantile } from './scan-gateway';
import { progressReporter } from '../tools/cli/progress';

/**
 * Issue 55's figures: the local folder and the Samba share side by side, in one run, at the production
 * settle window (2 s) and poll (5 s). Per folder: 10 lone requests on an idle gateway (request → final
 * envelope, against settle + 1 s), then 40 jobs at once through the slots (jobs/s per slot, against the
 * ideal 1 / (the emulator's delay + settle)), at two emulator delays. The share twice: woken by its change
 * notification (today), and with the notification taken away (the poll alone: before issue 55).
 * A request wakes the poller at once, as `ensurePoller` does in production.
 */
const SETTLE_MS = 2000;
const POLL_MS = 5000;
const SINGLES = 10;
const BATCH = 40;
const DELAYS_MS = [0, 1000];
const FIXTURES = path.resolve(__dirname, '../fixtures/ocr');

interface FolderRow {
  folder: string;
  wake: string;
  delayMs: number;
  single: { p50: number; p90: number };
  batchS: number;
  perSlot: number;
  idealPerSlot: number;
}

export async function scanShareVsLocal(bench: BenchStack) {
  const loadBefore = os.loadavg()[0];
  const template = planResources(bench.stack.definition.resources.Resources).tables.find(
    (t) => t.logicalId === 'ScanTable',
  )!;
  const TableName = `${template.create.TableName}-share-bench`;
  await bench.aws.dynamodb.send(new CreateTableCommand({ ...template.create, TableName }));
  const nc = await connect(natsOptions(bench.config.nats, 'bench-share'));
  const subject = `scan.results.bench.${randomUUID()}`;
  const finished = new Map<string, number>();
  nc.subscribe(subject, {
    callback: (_e, m) => {
      const e = JSON.parse(new TextDecoder().decode(m.data));
      if (e.status !== 'processing') finished.set(e.job_id, performance.now());
    },
  });
  const bucket = bench.config.buckets.files;
  const request = await benchRequests(bench, bucket);
  const until = async (cond: () => boolean) => {
    while (!cond()) await new Promise((r) => setTimeout(r, 5));
  };

  /** One folder at one emulator delay: the lone requests, then the batch. */
  async function measure(folder: string, wake: string, hotFolder: HotFolder, root: string, delayMs: number) {
    let wakeUp: () => void = () => undefined;
    const config = {
      ...loadScanConfig({
        SCAN_HOTFOLDER_ROOT: root,
        SCAN_RESULT_SUBJECT: subject,
        SCAN_SETTLE_SECONDS: String(SETTLE_MS / 1000),
        SCAN_POLL_SECONDS: String(POLL_MS / 1000),
      }),
      bucket,
    };
    const deps: GatewayDeps = {
      jobs: new DynamoDbScanJobStore(bench.aws.documents, TableName),
      files: new S3ScanFiles(bench.aws.s3, bucket),
      hotFolder,
      publish: (s, d, id) => publishWithRetries(nc, s, d, id, 3),
      normalizer: new ContentAiNormalizer(0.8),
      config,
      service: { name: 'bench', version: '0' },
      now: Date.now,
      log: silentLogger,
      wakePoller: async () => wakeUp(),
    };
    let running = true;
    const loops = Promise.all([
      (async () => {
        while (running) {
          await scanOnce({ root, fixturesDir: FIXTURES, delayMs, warn: () => undefined });
          await new Promise((r) => setTimeout(r, 20));
        }
      })(),
      (async () => {
        while (running) {
          await pollUntil(deps, Date.now() + 60_000);
          // Idle: sleep until a request wakes the poller (production: the request's ensurePoller).
          await new Promise<void>((r) => {
            wakeUp = r;
            setTimeout(r, 1000);
          });
        }
      })(),
    ]);
    try {
      const latencies: number[] = [];
      for (let i = 0; i < SINGLES; i++) {
        // An idle gateway: the poller has ended its linger.
        await new Promise((r) => setTimeout(r, 200));
        const r = request();
        const began = performance.now();
        await handleRequest(deps, JSON.stringify(r));
        await until(() => finished.has(r.job_id));
        latencies.push(finished.get(r.job_id)! - began);
      }
      const batch = Array.from({ length: BATCH }, request);
      const began = performance.now();
      await Promise.all(batch.map((r) => handleRequest(deps, JSON.stringify(r))));
      await until(() => batch.every((r) => finished.has(r.job_id)));
      const batchS = (performance.now() - began) / 1000;
      const row: FolderRow = {
        folder,
        wake,
        delayMs,
        single: { p50: quantile(latencies, 0.5), p90: quantile(latencies, 0.9) },
        batchS,
        perSlot: BATCH / batchS / config.maxInflight,
        idealPerSlot: 1000 / (delayMs + SETTLE_MS),
      };
      return row;
    } finally {
      running = false;
      wakeUp();
      await loops;
    }
  }

  const rows: FolderRow[] = [];
  const steps = DELAYS_MS.length * 3;
  const bar = progressReporter(process.stderr, steps, Date.now, 5000, 'runs');
  let done = 0;
  const localRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-share-local-'));
  const sambaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-share-samba-'));
  const share = await startSamba(sambaDir);
  try {
    for (const delayMs of DELAYS_MS) {
      const local = new LocalHotFolder(localRoot);
      rows.push(await measure('local', 'fs.watch', local, localRoot, delayMs));
      local.close();
      bar.tick(++done);
      const smb = new SmbHotFolder({ ...share, timeoutMs: 30_000 });
      rows.push(await measure('share', 'change notify', smb, share.root, delayMs));
      smb.close();
      bar.tick(++done);
      // The same share with the notification taken away: the loop wakes on its poll alone.
      const pollOnly = new SmbHotFolder({ ...share, timeoutMs: 30_000 });
      const withoutNotify: HotFolder = {
        put: (...a) => pollOnly.put(...a),
        poll: (...a) => pollOnly.poll(...a),
        healthy: () => pollOnly.healthy(),
      };
      rows.push(await measure('share', 'poll only', withoutNotify, share.root, delayMs));
      pollOnly.close();
      bar.tick(++done);
    }
  } finally {
    bar.end(done);
    await share.service.stop();
    await nc.close();
    fs.rmSync(localRoot, { recursive: true, force: true });
    fs.rmSync(sambaDir, { recursive: true, force: true });
    await bench.aws.dynamodb.send(new DeleteTableCommand({ TableName }));
  }
  return { rows, load: [loadBefore, os.loadavg()[0]] };
}

export function reportScanShareVsLocal(r: Awaited<ReturnType<typeof scanShareVsLocal>>): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(
    `\nScan on the share against the local folder (settle ${SETTLE_MS} ms, poll ${POLL_MS} ms; ` +
      `load average ${r.load.map((l) => l.toFixed(1)).join(' → ')} on ${os.cpus().length} CPUs)`,
  );
  out(
    `  | folder | wakes on | emulator delay | one request → envelope p50 / p90 | over settle + 1 s | ${BATCH} jobs | jobs/s per slot (ideal) |`,
  );
  out('  |---|---|---|---|---|---|---|');
  for (const row of r.rows) {
    const bound = SETTLE_MS + 1000 + row.delayMs;
    out(
      `  | ${row.folder} | ${row.wake} | ${row.delayMs} ms | ${row.single.p50.toFixed(0)} / ${row.single.p90.toFixed(0)} ms | ` +
        `x${(row.single.p50 / bound).toFixed(2)} | ${row.batchS.toFixed(1)} s | ${row.perSlot.toFixed(3)} (${row.idealPerSlot.toFixed(3)}) |`,
    );
  }
  const local = r.rows.find((x) => x.folder === 'local' && x.delayMs === 0)!;
  const notify = r.rows.find((x) => x.wake === 'change notify' && x.delayMs === 0)!;
  const poll = r.rows.find((x) => x.wake === 'poll only' && x.delayMs === 0)!;
  out(
    `  share / local, one request p50: x${(notify.single.p50 / local.single.p50).toFixed(2)} with change notify, ` +
      `x${(poll.single.p50 / local.single.p50).toFixed(2)} on the poll alone`,
  );
}

import { PutObjectCommand } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect } from 'nats';
import { loadScanConfig } from '../lib/scan/config';
import { natsOptions } from '../lib/nats/connection';
import type { Envelope } from '../lib/scan/contract';
import type { BenchStack } from './support';

/**
 * The gateway end to end on the real trigger path, as the core system sees it:
 * requests published on NATS into serverless offline (the connector or
 * offline's NATS plugin invokes scanRequest, which starts the poller itself),
 * the scanner emulator as its own process, the stack's default settings, no
 * schedule help. Per request: request → final envelope against the settle
 * floor (the scanner's answer landing in Output/ + the settle window).
 * Lone requests after idle gaps (the poller gone or about to leave), bursts,
 * then 100 jobs through SCAN_MAX_INFLIGHT slots against the ideal
 * (ceil(100 / slots) rounds of the scanner's time + the settle window).
 */
export async function scanEndToEnd(bench: BenchStack) {
  const loadBefore = os.loadavg()[0];
  const env = bench.stack.env;
  const scan = loadScanConfig({ ...process.env, ...env });
  const root = env.SCAN_HOTFOLDER_ROOT;
  const output = path.join(root, scan.dirs.output);
  const nc = await connect(natsOptions(bench.config.nats, 'bench-e2e'));
  const finals = new Map<string, number>();
  nc.subscribe(scan.resultSubject, {
    callback: (_e, m) => {
      const e = JSON.parse(new TextDecoder().decode(m.data)) as Envelope;
      if (e.status !== 'processing' && !finals.has(e.job_id)) finals.set(e.job_id, Date.now());
    },
  });
  await nc.flush();
  // When each answer set landed (the scanner renames Output/<job>/ into place whole).
  const answered = new Map<string, number>();
  fs.mkdirSync(output, { recursive: true });
  const watcher = fs.watch(output, (_event, name) => {
    if (name && /^[0-9a-f-]{36}$/.test(name) && !answered.has(name) && fs.existsSync(path.join(output, name)))
      answered.set(name, Date.now());
  });
  const body = fs.readFileSync(path.resolve(__dirname, '../fixtures/ocr/inputs/aep_3.pdf'));
  const bucket = bench.config.buckets.files;

  async function send(): Promise<Sample> {
    const key = `inbox/${randomUUID()}/aep_3.pdf`;
    await bench.aws.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    const job = randomUUID();
    const sentAt = Date.now();
    nc.publish(
      'scan.requests',
      JSON.stringify({
        schema_version: '1.0',
        job_id: job,
        file_id: randomUUID(),
        attempt: 1,
        pipeline: 'image',
        s3: { bucket, key },
        original_name: 'aep_3.pdf',
        reply_deadline: new Date(Date.now() + 900_000).toISOString(),
      }),
    );
    return { job, sentAt };
  }
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  async function done(samples: Sample[], timeoutMs: number) {
    for (const end = Date.now() + timeoutMs; Date.now() < end && samples.some((s) => !finals.has(s.job));)
      await pause(20);
    return samples.map((s) => ({
      total: (finals.get(s.job) ?? NaN) - s.sentAt,
      scanner: (answered.get(s.job) ?? NaN) - s.sentAt,
      overhead: (finals.get(s.job) ?? NaN) - ((answered.get(s.job) ?? NaN) + scan.settleMs),
    }));
  }

  try {
    // Warm-up: the first invocations load the bundles.
    await done([await send()], 60_000);
    // Lone requests after idle gaps: 0-3 s (the poller busy or lingering), 6-9 s (about to leave), 12-20 s (gone).
    const lone = [];
    for (const gap of [0, 2, 12, 7, 15, 3, 9, 20, 6, 13]) {
      await pause(gap * 1000);
      lone.push(...(await done([await send()], 60_000)));
    }
    // Bursts: 8 requests at once (two rounds of 4 slots), after an idle gap.
    const bursts = [];
    for (let i = 0; i < 3; i++) {
      await pause(15_000);
      bursts.push(...(await done(await Promise.all(Array.from({ length: 8 }, send)), 120_000)));
    }
    // 100 jobs at once through the slots.
    await pause(15_000);
    const began = Date.now();
    const hundred = await done(await Promise.all(Array.from({ length: 100 }, send)), 600_000);
    const elapsed = Math.max(...hundred.map((s) => s.total));
    const scannerMs = median(lone.map((s) => s.scanner));
    const ideal = Math.ceil(100 / scan.maxInflight) * (scannerMs + scan.settleMs);
    return {
      settleMs: scan.settleMs,
      pollMs: scan.pollEveryMs,
      slots: scan.maxInflight,
      lone,
      bursts,
      hundred: { elapsed, ideal, scannerMs, complete: hundred.filter((s) => Number.isFinite(s.total)).length },
      startedAt: began,
      load: [loadBefore, os.loadavg()[0]],
    };
  } finally {
    watcher.close();
    await nc.close();
  }
}

interface Sample {
  job: string;
  sentAt: number;
}

function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

export function reportScanEndToEnd(r: Awaited<ReturnType<typeof scanEndToEnd>>): void {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  const bound = r.settleMs + r.pollMs + 1000;
  const line = (title: string, samples: typeof r.lone) => {
    const totals = samples.map((x) => x.total);
    const max = Math.max(...totals);
    const floor = median(samples.map((x) => x.scanner)) + r.settleMs;
    process.stdout.write(
      `  ${title.padEnd(30)} n=${String(samples.length).padStart(3)}  median ${s(median(totals))}  max ${s(max)}` +
        `  floor ${s(floor)} (scanner ${s(floor - r.settleMs)} + settle)  over the floor: median ${s(median(samples.map((x) => x.overhead)))}` +
        `  ${max <= bound ? 'within' : 'OVER'} the bound ${s(bound)}\n`,
    );
  };
  process.stdout.write(
    `\nScan gateway end to end (NATS → serverless offline → hot folder → NATS), settle ${s(r.settleMs)}, poll ${s(r.pollMs)}:\n`,
  );
  line('lone requests after idle gaps', r.lone);
  line('bursts of 8', r.bursts);
  const ratio = r.hundred.elapsed / r.hundred.ideal;
  process.stdout.write(
    `  100 jobs, ${r.slots} slots: ${s(r.hundred.elapsed)} (${r.hundred.complete}/100 answered) vs ideal ${s(r.hundred.ideal)}` +
      ` (${Math.ceil(100 / r.slots)} rounds × (scanner ${s(r.hundred.scannerMs)} + settle)) = x${ratio.toFixed(2)} (goal ≤ x1.15)\n`,
  );
  process.stdout.write(`  load average: ${r.load.map((l) => l.toFixed(1)).join(' → ')}\n`);
}

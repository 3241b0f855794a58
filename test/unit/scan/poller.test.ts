import { randomUUID } from 'node:crypto';
import { loadScanConfig } from '../../../lib/scan/config';
import { silentLogger } from '../../../lib/log';
import type { Envelope } from '../../../lib/scan/contract';
import { GatewayDeps, handleRequest } from '../../../lib/scan/gateway';
import type { HotFolder } from '../../../lib/scan/hotfolder';
import { ContentAiNormalizer } from '../../../lib/scan/normalizer';
import {
  DEMAND_MARGIN_MS,
  ensurePoller,
  HANDOVER_MARGIN_MS,
  POLLER_START_GRACE_MS,
  PollerDeps,
  runPoller,
} from '../../../lib/scan/poller';
import { MemoryPollerLease } from './memory-lease';
import { MemoryScanJobStore } from './memory-store';
import { inputOf } from '../../../lib/scan/input';

/**
 * The poller's lease protocol (lib/scan/poller.ts) against in-memory stores: one poller at a time, started by
 * the request that finds none, no request lost in the poller's release, a handover before the timeout.
 */
function setup() {
  const clock = { now: Date.parse('2026-12-02T12:00:00Z') };
  const published: Envelope[] = [];
  const answers = new Map<string, string>();
  const hotFolder: HotFolder = {
    put: async () => undefined,
    poll: async (job) => {
      const body = answers.get(job);
      return body === undefined ? null : [{ name: 'a.json', size: body.length, read: async () => Buffer.from(body) }];
    },
    healthy: async () => true,
    // Waiting moves the fake clock: the scanner answers every file put so far while the poller waits.
    changed: async (ms) => {
      clock.now += ms;
    },
  };
  const lease = new MemoryPollerLease();
  const started: string[] = [];
  let ids = 0;
  const poller: PollerDeps = {
    lease,
    newId: () => `holder-${++ids}`,
    start: async (holder) => void started.push(holder),
  };
  const deps: GatewayDeps = {
    jobs: new MemoryScanJobStore(),
    files: {
      read: async () => Buffer.from('%PDF'),
      open: async () => inputOf(Buffer.from('%PDF')),
      writeRaw: async () => undefined,
    },
    hotFolder,
    publish: async (_s, data) => void published.push(JSON.parse(data)),
    normalizer: new ContentAiNormalizer(0.8),
    config: { ...loadScanConfig({ SCAN_HOTFOLDER_ROOT: '/hot' }), bucket: 'files' },
    service: { name: 't', version: '1' },
    now: () => clock.now,
    log: silentLogger,
    wakePoller: () => ensurePoller(poller, clock.now, silentLogger),
  };
  const request = () => ({
    schema_version: '1.0',
    job_id: randomUUID(),
    file_id: randomUUID(),
    attempt: 1,
    pipeline: 'image',
    s3: { bucket: 'files', key: 'in/a.pdf' },
    original_name: 'a.pdf',
    reply_deadline: '2026-12-02T13:00:00Z',
  });
  const answer = (job: string) =>
    answers.set(job, JSON.stringify({ error: { code: '', message: '' }, data_ocr: { confidence: 0.9, fields: [] } }));
  const finals = () => published.filter((e) => e.status !== 'processing');
  return { deps, poller, lease, started, clock, request, answer, finals };
}

it('a request reaching an idle gateway starts ONE poller; the requests after it find it running', async () => {
  const t = setup();
  const reqs = Array.from({ length: 8 }, () => t.request());
  await Promise.all(reqs.map((r) => handleRequest(t.deps, JSON.stringify(r))));
  expect(t.started).toEqual(['holder-1']);
  expect(t.lease.lease).toEqual({ holder: 'holder-1', expires_at: t.clock.now + POLLER_START_GRACE_MS });

  // The schedule's tick while that poller holds the lease does nothing.
  const tick = await runPoller(t.deps, t.poller, { hardEndAt: t.clock.now + 55_000 });
  expect(tick).toMatchObject({ outcome: 'lease-held', passes: 0 });

  // The invoked poller confirms its lease, answers every job, lingers, then releases.
  for (const r of reqs) t.answer(r.job_id);
  const run = await runPoller(t.deps, t.poller, { holder: 'holder-1', hardEndAt: t.clock.now + 55_000 });
  expect(run).toMatchObject({ outcome: 'released', finished: 8 });
  expect(t.finals()).toHaveLength(8);
  expect(t.lease.lease).toBeUndefined();
});

it('a poller invoked for a lease that another took (it started too late) does not poll', async () => {
  const t = setup();
  await handleRequest(t.deps, JSON.stringify(t.request()));
  t.clock.now += POLLER_START_GRACE_MS + 1; // holder-1 never started; the next request takes over
  await handleRequest(t.deps, JSON.stringify(t.request()));
  expect(t.started).toEqual(['holder-1', 'holder-2']);
  expect(await runPoller(t.deps, t.poller, { holder: 'holder-1', hardEndAt: t.clock.now + 55_000 })).toMatchObject({
    outcome: 'lease-held',
  });
});

it('a request that lands while the poller is about to release is still answered by that poller', async () => {
  const t = setup();
  const first = t.request();
  await handleRequest(t.deps, JSON.stringify(first));
  t.answer(first.job_id);
  const late = t.request();
  // Between the poller's last idle pass and its release, a request stores its job and finds the lease held.
  t.lease.beforeRelease = async () => {
    t.clock.now += 10;
    await handleRequest(t.deps, JSON.stringify(late));
    t.answer(late.job_id);
  };
  const run = await runPoller(t.deps, t.poller, { holder: 'holder-1', hardEndAt: t.clock.now + 55_000 });
  expect(t.started).toEqual(['holder-1']); // the late request started no poller: it saw the lease held
  expect(run.outcome).toBe('released');
  expect(t.finals().map((e) => e.job_id)).toEqual([first.job_id, late.job_id]);
});

it('a request just before the last pass began keeps the poller from releasing (the index may not show its job yet)', async () => {
  const t = setup();
  const lease = await t.lease.demand({ holder: 'holder-x', expires_at: t.clock.now + 55_000 }, t.clock.now);
  expect(lease.holder).toBe('holder-x');
  // No job is visible, but the demand is within DEMAND_MARGIN_MS of the pass: the release must wait for a later pass.
  const run = await runPoller(t.deps, t.poller, { holder: 'holder-x', hardEndAt: t.clock.now + 55_000 });
  expect(run.outcome).toBe('released');
  expect(run.passes).toBeGreaterThan(1);
  expect(t.clock.now).toBeGreaterThanOrEqual((t.lease.demandAt ?? 0) + DEMAND_MARGIN_MS);
});

it('work left near the timeout: the poller hands over to a successor, which takes its lease', async () => {
  const t = setup();
  const req = t.request(); // never answered: work remains
  await handleRequest(t.deps, JSON.stringify(req));
  const hardEndAt = t.clock.now + 20_000;
  const run = await runPoller(t.deps, t.poller, { holder: 'holder-1', hardEndAt });
  expect(run.outcome).toBe('handed-over');
  expect(t.clock.now).toBeLessThanOrEqual(hardEndAt - HANDOVER_MARGIN_MS);
  expect(t.started).toEqual(['holder-1', 'holder-2']);
  expect(t.lease.lease?.holder).toBe('holder-2');
  // The predecessor can no longer release or hand over; the successor answers.
  expect(await t.lease.release('holder-1', Number.MAX_SAFE_INTEGER)).toBe(false);
  t.answer(req.job_id);
  const next = await runPoller(t.deps, t.poller, { holder: 'holder-2', hardEndAt: t.clock.now + 55_000 });
  expect(next).toMatchObject({ outcome: 'released', finished: 1 });
  expect(t.finals().map((e) => e.job_id)).toEqual([req.job_id]);
});

it('a failed poller start gives the lease back: the next request starts one', async () => {
  const t = setup();
  const start = t.poller.start;
  t.poller.start = async () => {
    throw new Error('throttled');
  };
  expect(await handleRequest(t.deps, JSON.stringify(t.request()))).toBe('started');
  expect(t.lease.lease).toBeUndefined();
  t.poller.start = start;
  await handleRequest(t.deps, JSON.stringify(t.request()));
  expect(t.started).toEqual(['holder-2']);
});

it('the schedule takes over a lease whose holder is past its hard end (a crashed poller)', async () => {
  const t = setup();
  await t.lease.acquire({ holder: 'crashed', expires_at: t.clock.now + 1000 }, t.clock.now);
  expect((await runPoller(t.deps, t.poller, { hardEndAt: t.clock.now + 55_000 })).outcome).toBe('lease-held');
  t.clock.now += 1001;
  expect((await runPoller(t.deps, t.poller, { hardEndAt: t.clock.now + 55_000 })).outcome).toBe('released');
});

it('the poller records what wakes it whenever that changes, and only while it holds the lease (the health check reads it)', async () => {
  const t = setup();
  let mode: 'notify' | 'poll' = 'poll';
  let waits = 0;
  const writes: string[] = [];
  const record = t.lease.recordWake.bind(t.lease);
  t.lease.recordWake = async (holder, wake) => {
    writes.push(`${holder}:${wake.mode}`);
    return record(holder, wake);
  };
  t.deps.hotFolder.wakeMode = () => mode;
  const changed = t.deps.hotFolder.changed!;
  t.deps.hotFolder.changed = async (ms) => {
    waits += 1;
    if (waits === 1) mode = 'notify'; // the watcher is armed at the first wait
    if (waits === 3) t.answer(r.job_id); // the OCR system answers a few passes in
    if (waits === 4) mode = 'poll'; // and the watcher drops later (a broken session)
    return changed(ms);
  };
  const r = t.request();
  await handleRequest(t.deps, JSON.stringify(r));
  const run = await runPoller(t.deps, t.poller, { holder: 'holder-1', hardEndAt: t.clock.now + 55_000 });
  expect(run.passes).toBeGreaterThan(4);
  // One write per change, not one per pass.
  expect(writes).toEqual(['holder-1:poll', 'holder-1:notify', 'holder-1:poll']);
  expect(t.lease.wake).toEqual({ mode: 'poll', at: expect.any(Number) });

  // A poller that lost its lease cannot overwrite what the holder recorded.
  t.lease.lease = { holder: 'holder-9', expires_at: t.clock.now + 60_000 };
  expect(await t.lease.recordWake('holder-1', { mode: 'notify', at: t.clock.now })).toBe(false);
  expect(t.lease.wake?.mode).toBe('poll');
});

it('a wake record that cannot be written never stops the poll', async () => {
  const t = setup();
  t.deps.hotFolder.wakeMode = () => 'notify';
  t.lease.recordWake = async () => {
    throw new Error('ProvisionedThroughputExceededException');
  };
  const r = t.request();
  await handleRequest(t.deps, JSON.stringify(r));
  t.answer(r.job_id);
  const run = await runPoller(t.deps, t.poller, { holder: 'holder-1', hardEndAt: t.clock.now + 55_000 });
  expect(run).toMatchObject({ outcome: 'released', finished: 1 });
});

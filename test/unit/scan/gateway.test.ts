import { randomUUID } from 'node:crypto';
import { loadScanConfig } from '../../../lib/config';
import { silentLogger } from '../../../lib/log';
import type { Envelope } from '../../../lib/scan/contract';
import { GatewayDeps, handleRequest, pollOnce } from '../../../lib/scan/gateway';
import type { AnswerFile, HotFolder } from '../../../lib/scan/hotfolder';
import { ContentAiNormalizer } from '../../../lib/scan/normalizer';
import { MemoryScanJobStore } from './memory-store';

/** The gateway's policy against an in-memory store and hot folder (fast; the real-service versions are in test/integration/scan). */
function setup(env: Record<string, string> = {}) {
  const clock = { now: Date.parse('2026-12-02T12:00:00Z') };
  const published: Envelope[] = [];
  const files = new Map<string, Map<string, string>>();
  const inbox: string[] = [];
  const failPoll = new Set<string>();
  const hotFolder: HotFolder = {
    put: async (name) => void inbox.push(name),
    poll: async (job) => {
      if (failPoll.has(job)) throw new Error('EIO');
      const set = files.get(job);
      return set
        ? [...set].map(([name, body]): AnswerFile => ({ name, size: body.length, read: async () => Buffer.from(body) }))
        : null;
    },
    healthy: async () => true,
  };
  const store = new MemoryScanJobStore();
  const deps: GatewayDeps = {
    jobs: store,
    files: { read: async () => Buffer.from('%PDF'), writeRaw: async () => undefined },
    hotFolder,
    publish: async (_s, data) => void published.push(JSON.parse(data)),
    normalizer: new ContentAiNormalizer(0.8),
    config: { ...loadScanConfig({ SCAN_HOTFOLDER_ROOT: '/hot', ...env }), bucket: 'files' },
    service: { name: 't', version: '1' },
    now: () => clock.now,
    log: silentLogger,
  };
  const request = (over: Record<string, unknown> = {}) => ({
    schema_version: '1.0',
    job_id: randomUUID(),
    file_id: randomUUID(),
    attempt: 1,
    pipeline: 'image',
    s3: { bucket: 'files', key: 'in/a.pdf' },
    original_name: 'a.pdf',
    reply_deadline: '2026-12-02T13:00:00Z',
    ...over,
  });
  const answer = (job: string) =>
    files.set(
      job,
      new Map([
        ['a.json', JSON.stringify({ error: { code: '', message: '' }, data_ocr: { confidence: 0.9, fields: [] } })],
      ]),
    );
  return { deps, store, clock, published, inbox, failPoll, request, answer };
}

const finals = (published: Envelope[]) => published.filter((e) => e.status !== 'processing');

it('a job runs: ack, file, settle, one answer; the slot comes back', async () => {
  const t = setup();
  const req = t.request();
  expect(await handleRequest(t.deps, JSON.stringify(req))).toBe('started');
  t.answer(req.job_id);
  await pollOnce(t.deps);
  t.clock.now += 2000;
  await pollOnce(t.deps);
  expect(t.published.map((e) => e.status)).toEqual(['processing', 'done']);
  expect(await t.store.slotsInUse()).toBe(0);
});

it('slots: the fifth job queues, then starts when one finishes', async () => {
  const t = setup();
  const reqs = Array.from({ length: 5 }, () => t.request());
  const outcomes = [];
  for (const r of reqs) outcomes.push(await handleRequest(t.deps, JSON.stringify(r)));
  expect(outcomes).toEqual(['started', 'started', 'started', 'started', 'queued']);
  t.answer(reqs[0].job_id);
  await pollOnce(t.deps);
  t.clock.now += 2000;
  const pass = await pollOnce(t.deps);
  expect(pass).toMatchObject({ finished: 1, started: 1, queued: 0 });
  expect(t.inbox).toHaveLength(5);
});

it('a pass goes on past a job whose poll throws, and reports when the next job is due', async () => {
  const t = setup();
  const [bad, good] = [t.request(), t.request()];
  await handleRequest(t.deps, JSON.stringify(bad));
  t.clock.now += 1;
  await handleRequest(t.deps, JSON.stringify(good));
  t.failPoll.add(bad.job_id);
  t.answer(good.job_id);
  const first = await pollOnce(t.deps);
  expect(first.nextDueAt).toBe(t.clock.now + 2000); // the good job's settle window
  t.clock.now += 2000;
  await pollOnce(t.deps);
  expect(finals(t.published).map((e) => e.job_id)).toEqual([good.job_id]);
});

it('a duplicate with another payload is acked and counted', async () => {
  const t = setup();
  const req = t.request();
  await handleRequest(t.deps, JSON.stringify(req));
  expect(await handleRequest(t.deps, JSON.stringify({ ...req, file_id: randomUUID() }))).toBe('duplicate');
  expect(await t.store.counter('scan_payload_conflicts')).toBe(1);
  expect(t.inbox).toHaveLength(1);
});

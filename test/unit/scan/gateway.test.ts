import { randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import { loadScanConfig } from '../../../lib/scan/config';
import { silentLogger } from '../../../lib/log';
import type { Envelope } from '../../../lib/scan/contract';
import { GatewayDeps, handleRequest, pollOnce, pollUntil } from '../../../lib/scan/gateway';
import type { AnswerFile, HotFolder } from '../../../lib/scan/hotfolder';
import { ContentAiNormalizer } from '../../../lib/scan/normalizer';
import { MemoryScanJobStore } from './memory-store';
import { inputOf } from '../../../lib/scan/input';

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
    files: {
      read: async () => Buffer.from('%PDF'),
      open: async () => inputOf(Buffer.from('%PDF')),
      writeRaw: async () => undefined,
    },
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

describe('pollUntil', () => {
  /** A hot folder whose waits move the fake clock; `during(n)` runs inside the n-th wait (0-based), as a landing answer would. */
  function waiting(t: ReturnType<typeof setup>, during: Record<number, () => Promise<void>> = {}) {
    const waits: number[] = [];
    t.deps.hotFolder.changed = async (timeoutMs) => {
      const n = waits.push(timeoutMs) - 1;
      if (during[n]) {
        await during[n]();
        t.clock.now += 10; // woken early by the change
      } else t.clock.now += timeoutMs;
    };
    return waits;
  }

  it('an invocation that starts idle ends after one pass, without waiting', async () => {
    const t = setup();
    const waits = waiting(t);
    expect(await pollUntil(t.deps, t.clock.now + 50_000)).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('stays one poll interval after its last answer: a job that lands meanwhile is done in the same invocation', async () => {
    // Settle window = poll interval: the pass that finishes A comes a whole interval after the last busy pass.
    const t = setup({ SCAN_SETTLE_SECONDS: '5', SCAN_POLL_SECONDS: '5' });
    const [a, b] = [t.request(), t.request()];
    await handleRequest(t.deps, JSON.stringify(a));
    t.answer(a.job_id);
    const waits = waiting(t, {
      // The second wait is the linger after A's answer: B is requested and answered during it.
      1: async () => {
        await handleRequest(t.deps, JSON.stringify(b));
        t.answer(b.job_id);
      },
    });
    const passes = await pollUntil(t.deps, t.clock.now + 50_000);
    expect(finals(t.published).map((e) => e.job_id)).toEqual([a.job_id, b.job_id]);
    expect(passes.reduce((n, p) => n + p.finished, 0)).toBe(2);
    // After B: one more interval of watching, then the invocation ends idle.
    expect(waits[waits.length - 1]).toBe(5000);
    expect(passes[passes.length - 1]).toMatchObject({ finished: 0, waiting: 0, inFlight: 0 });
  });

  it('wakes for a due settle window before the poll interval, and never waits past its budget', async () => {
    const t = setup({ SCAN_SETTLE_SECONDS: '2', SCAN_POLL_SECONDS: '5' });
    const req = t.request();
    await handleRequest(t.deps, JSON.stringify(req));
    t.answer(req.job_id);
    const waits = waiting(t);
    await pollUntil(t.deps, t.clock.now + 3000);
    expect(waits[0]).toBe(2000); // the settle window, not the 5 s interval
    expect(finals(t.published)).toHaveLength(1);
    expect(waits.slice(1).every((w) => w <= 1000)).toBe(true); // the budget ends 3 s after the start
  });

  it('lists known waiting jobs before its reads, and judges a due window at its due moment', async () => {
    const t = setup({ SCAN_SETTLE_SECONDS: '2', SCAN_POLL_SECONDS: '5' });
    const req = t.request();
    await handleRequest(t.deps, JSON.stringify(req));
    t.answer(req.job_id);
    const inState = t.store.inState.bind(t.store);
    t.store.inState = async (...args) => {
      t.clock.now += 30; // each round of reads takes 30 ms
      return inState(...args);
    };
    const listedAt: number[] = [];
    const poll = t.deps.hotFolder.poll.bind(t.deps.hotFolder);
    t.deps.hotFolder.poll = (job) => (listedAt.push(t.clock.now), poll(job));
    const firstSeen: number[] = [];
    const recordPoll = t.store.recordPoll.bind(t.store);
    t.store.recordPoll = async (job, patch) => {
      if (patch.settle) firstSeen.push(patch.settle.first_seen_at);
      return recordPoll(job, patch);
    };
    waiting(t);
    const passes = await pollUntil(t.deps, t.clock.now + 50_000);
    expect(firstSeen).toEqual([listedAt[0]]); // the window starts when the set was listed
    // The next pass starts its reads a read-time early; its early listing (window not over) is retaken right when
    // the window ends, and that pass settles the job: neither early nor a pass late.
    expect(listedAt[1]).toBeLessThan(firstSeen[0] + 2000);
    expect(listedAt[2]).toBe(firstSeen[0] + 2000);
    expect(passes[1].finished).toBe(1);
    expect(finals(t.published)).toHaveLength(1);
  });

  it('when a settle window is due and slots are full, reads the queue head with the first reads of the pass', async () => {
    const t = setup({ SCAN_SETTLE_SECONDS: '2', SCAN_POLL_SECONDS: '5' });
    const reqs = Array.from({ length: 5 }, () => t.request());
    for (const r of reqs) await handleRequest(t.deps, JSON.stringify(r)); // four slots, the fifth queued
    t.answer(reqs[0].job_id);
    const calls: string[] = [];
    const { inState, finish, startSubmitted } = t.store;
    t.store.inState = (state, limit) => (calls.push(`inState:${state}`), inState.call(t.store, state, limit));
    t.store.finish = (job, ...rest) => (calls.push(`finish`), finish.call(t.store, job, ...rest));
    t.store.startSubmitted = (job, ...rest) => (calls.push(`start`), startSubmitted.call(t.store, job, ...rest));
    waiting(t);
    await pollUntil(t.deps, t.clock.now + 3000);
    expect(t.inbox).toHaveLength(5);
    // The pass that finished the first job: its first round of reads, then the finish and at once the start.
    const finishAt = calls.indexOf('finish');
    let readsFrom = finishAt;
    while (readsFrom > 0 && calls[readsFrom - 1].startsWith('inState:')) readsFrom--;
    expect(calls.slice(readsFrom, finishAt)).toContain('inState:queued');
    expect(calls.slice(finishAt, finishAt + 2)).toEqual(['finish', 'start']); // no second read of the queue
  });

  it('drains a queue at once while slots are free: no poll interval per pass of `free` jobs', async () => {
    const t = setup({ SCAN_SETTLE_SECONDS: '2', SCAN_POLL_SECONDS: '5' });
    const running = [t.request(), t.request()];
    for (const r of running) await handleRequest(t.deps, JSON.stringify(r)); // two of four slots, never answered
    const other = Array.from({ length: 8 }, () => t.request({ s3: { bucket: 'other', key: 'in/a.pdf' } }));
    t.store.inUse = 4; // the slots look full while they arrive: they queue (as in a burst)
    for (const r of other) expect(await handleRequest(t.deps, JSON.stringify(r))).toBe('queued');
    t.store.inUse = 2;
    waiting(t);
    await pollUntil(t.deps, t.clock.now + 3000); // less than one poll interval
    expect(finals(t.published).map((e) => e.error?.code)).toEqual(other.map(() => 'FILE_READ_ERROR'));
    expect(await t.store.slotsInUse()).toBe(2); // answered without taking a slot
  });
});

describe('every input opened is written or closed (an unread S3 body holds its connection)', () => {
  function tracked(t: ReturnType<typeof setup>) {
    const opened: Readable[] = [];
    t.deps.files = {
      ...t.deps.files,
      open: async () => {
        const input = inputOf(Buffer.from('%PDF'));
        opened.push(input.body);
        return input;
      },
    };
    return opened;
  }

  it('written, refused for its name, or opened for a slot that did not free: all closed after the pass', async () => {
    const t = setup({ SCAN_MAX_INFLIGHT: '1' });
    const opened = tracked(t);
    const first = t.request();
    await handleRequest(t.deps, JSON.stringify(first));
    const queued = [t.request({ original_name: 'a/b.pdf' }), t.request(), t.request()];
    for (const r of queued) await handleRequest(t.deps, JSON.stringify(r));
    // The slot stays held and a window is due: the queue's head is opened early, and not used.
    await pollOnce(t.deps, { slotDue: true });
    await new Promise((r) => setImmediate(r));
    expect(opened.length).toBe(2);
    expect(opened.every((b) => b.destroyed)).toBe(true);
    t.answer(first.job_id);
    await pollOnce(t.deps);
    t.clock.now += 2000;
    await pollOnce(t.deps); // the first is answered; the bad name is opened, then answered without a slot
    await pollOnce(t.deps); // the next takes the slot: written
    await new Promise((r) => setImmediate(r));
    expect(finals(t.published).map((e) => e.job_id)).toEqual([first.job_id, queued[0].job_id]);
    expect(opened.length).toBe(4);
    expect(opened.every((b) => b.destroyed)).toBe(true);
    expect(t.inbox).toHaveLength(2);
  });
});

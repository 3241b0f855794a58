import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { handleRequest, pollOnce } from '../../../lib/scan/gateway';
import { AnswerRefusedError, type AnswerFile, type HotFolder } from '../../../lib/scan/hotfolder';
import { SmbHotFolder } from '../../../lib/scan/smb-hotfolder';
import { startSamba } from '../../support/samba';
import { finals, harness, Harness, request, scanSuite, settleNats, upload } from '../../support/scan';

/**
 * One answer set never stops the gateway (docs/scan.md, "Bounds"): a set over its bounds is refused unread with
 * an error envelope and the next job is answered; a set whose read kills the poller (or throws) twice is given
 * up; a queued job waits at most SCAN_TIMEOUT_SECONDS for its slot, whatever its `reply_deadline` says.
 */
scanSuite();

const OK = JSON.stringify({ error: { code: '' } });

async function submitted(h: Harness, files: Record<string, string | number>) {
  const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
  await handleRequest(h.deps, JSON.stringify(req));
  const dir = path.join(h.root, 'Output', req.job_id);
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, body] of Object.entries(files))
    fs.writeFileSync(path.join(dir, name), typeof body === 'number' ? `"${'x'.repeat(body - 2)}"` : body);
  return req;
}

/** The hot folder as given, each answer file's reads counted. */
function counted(h: Harness): { reads: string[] } {
  const real = h.deps.hotFolder;
  const seen = { reads: [] as string[] };
  h.deps.hotFolder = {
    put: (n, b) => real.put(n, b),
    healthy: () => real.healthy(),
    poll: async (jobId) =>
      (await real.poll(jobId))?.map((f): AnswerFile => ({
        ...f,
        read: (max) => (seen.reads.push(f.name), f.read(max)),
      })) ?? null,
  };
  return seen;
}

async function run(h: Harness, passes = 3) {
  for (let i = 0; i < passes; i++, h.clock.now += 2500) await pollOnce(h.deps);
  await settleNats();
}

describe('answer bounds', () => {
  const env = { SCAN_MAX_ANSWER_BYTES: '2048', SCAN_MAX_ANSWER_SET_BYTES: '4096', SCAN_MAX_ANSWER_FILES: '3' };

  it('a file over SCAN_MAX_ANSWER_BYTES: the job is refused unread with an error envelope; the next job is answered', async () => {
    const h = await harness({}, env);
    const seen = counted(h);
    const large = await submitted(h, { 'a.json': OK, 'big.json': 2049 });
    const next = await submitted(h, { 'a.json': OK });
    await run(h);
    expect(finals(h)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          job_id: large.job_id,
          status: 'error',
          raw_s3_key: null,
          error: {
            code: 'RECOGNITION_FAILED',
            message: 'answer refused: big.json has 2049 bytes, more than the 2048 allowed (SCAN_MAX_ANSWER_BYTES)',
          },
        }),
        expect.objectContaining({ job_id: next.job_id, status: 'needs_check' }),
      ]),
    );
    expect(finals(h)).toHaveLength(2);
    expect(seen.reads).toEqual(['a.json']); // the next job's; nothing of the refused set was read
    expect(await h.deps.jobs.slotsInUse()).toBe(0);
  });

  it('more files than SCAN_MAX_ANSWER_FILES, or a set over SCAN_MAX_ANSWER_SET_BYTES: refused unread', async () => {
    const h = await harness({}, env);
    const seen = counted(h);
    const many = await submitted(h, { 'a.json': OK, 'b.json': OK, 'c.json': OK, 'd.json': OK });
    const heavy = await submitted(h, { 'a.json': 1500, 'b.json': 1500, 'c.json': 1500 });
    const fits = await submitted(h, { 'a.json': 2048, 'b.json': 2048 }); // exactly at both bounds
    await run(h);
    const errorOf = (jobId: string) => finals(h).find((e) => e.job_id === jobId)?.error;
    expect(errorOf(many.job_id)).toEqual({
      code: 'RECOGNITION_FAILED',
      message: 'answer refused: 4 files, more than the 3 allowed (SCAN_MAX_ANSWER_FILES)',
    });
    expect(errorOf(heavy.job_id)).toEqual({
      code: 'RECOGNITION_FAILED',
      message: 'answer refused: the set has 4500 bytes, more than the 4096 allowed (SCAN_MAX_ANSWER_SET_BYTES)',
    });
    expect(finals(h).find((e) => e.job_id === fits.job_id)).toMatchObject({ status: 'needs_check' });
    expect(seen.reads.sort()).toEqual(['a.json', 'b.json']);
  });

  it('a file that grows past what was listed is not read half: the job waits, then answers what settled', async () => {
    const h = await harness({}, env);
    const req = await submitted(h, { 'a.json': '{"error": {"code": ""}}' });
    const real = h.deps.hotFolder;
    let grown = false;
    h.deps.hotFolder = {
      ...real,
      put: (n, b) => real.put(n, b),
      healthy: () => real.healthy(),
      poll: async (jobId) =>
        (await real.poll(jobId))?.map((f): AnswerFile => ({
          ...f,
          read: (max) => {
            // The writer appends between the settled listing and the read, once.
            if (!grown) fs.appendFileSync(path.join(h.root, 'Output', jobId, f.name), '   ');
            grown = true;
            return f.read(max);
          },
        })) ?? null,
    } satisfies HotFolder;
    await run(h, 2);
    expect(finals(h)).toEqual([]);
    expect((await h.deps.jobs.get(req.job_id))!.answer_reads).toBe(0); // not counted against the set
    await run(h, 3);
    expect(finals(h)).toEqual([expect.objectContaining({ job_id: req.job_id, status: 'needs_check' })]);
  });
});

describe('a set whose read fails the same way twice', () => {
  it('reads that kill the poller (never come back) or throw: the third pass ends the job, the others are answered', async () => {
    const h = await harness();
    const poison = await submitted(h, { 'a.json': OK });
    const real = h.deps.hotFolder;
    const attempts: string[] = [];
    h.deps.hotFolder = {
      put: (n, b) => real.put(n, b),
      healthy: () => real.healthy(),
      poll: async (jobId) =>
        (await real.poll(jobId))?.map((f): AnswerFile =>
          jobId !== poison.job_id
            ? f
            : {
                ...f,
                read: () => {
                  attempts.push(f.name);
                  // The first read never returns (the invocation was killed in it); the second throws.
                  if (attempts.length === 1) return new Promise<Buffer>(() => undefined);
                  throw new RangeError('Invalid string length');
                },
              },
        ) ?? null,
    };
    h.clock.now += 2500;
    await pollOnce(h.deps); // sees the set, starts its settle window
    h.clock.now += 2500;
    void pollOnce(h.deps); // settled: the read begins and never ends — this "invocation" is gone
    await new Promise((r) => setTimeout(r, 500));
    expect(attempts).toHaveLength(1);
    const other = await submitted(h, { 'a.json': OK });
    await run(h, 4);
    expect(attempts).toHaveLength(2); // read again once, then never
    expect(finals(h)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ job_id: other.job_id, status: 'needs_check' }),
        expect.objectContaining({
          job_id: poison.job_id,
          status: 'error',
          error: {
            code: 'UNKNOWN_ERROR',
            message: 'reading the answer set failed twice (the poller stopped or failed while reading it): given up',
          },
        }),
      ]),
    );
    expect(await h.deps.jobs.slotsInUse()).toBe(0);
  });
});

describe('reply_deadline is capped at SCAN_TIMEOUT_SECONDS', () => {
  it('a queued job with a deadline years away gets TIMEOUT once it waited SCAN_TIMEOUT_SECONDS, unread', async () => {
    const h = await harness({}, { SCAN_MAX_INFLIGHT: '1', SCAN_TIMEOUT_SECONDS: '10' });
    const reads: string[] = [];
    const files = h.deps.files;
    h.deps.files = {
      read: (b, k) => files.read(b, k),
      open: (b, k) => (reads.push(k), files.open(b, k)),
      writeRaw: (k, b) => files.writeRaw(k, b),
    };
    const first = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    const far = request(await upload('aep_6.pdf'), 'aep_6.pdf', { reply_deadline: '2099-01-01T00:00:00Z' });
    expect(await handleRequest(h.deps, JSON.stringify(first))).toBe('started');
    expect(await handleRequest(h.deps, JSON.stringify(far))).toBe('queued');
    h.clock.now += 10_001; // the first job's deadline and the queued job's wait both end
    await run(h, 2);
    const answerOf = (jobId: string) => finals(h).find((e) => e.job_id === jobId)?.error;
    expect(answerOf(first.job_id)).toEqual({ code: 'TIMEOUT', message: 'no answer before the deadline' });
    expect(answerOf(far.job_id)).toEqual({
      code: 'TIMEOUT',
      message: 'the job got no slot before its reply deadline (at most SCAN_TIMEOUT_SECONDS after the request)',
    });
    expect(reads).toEqual([first.s3.key]);
  });

  it('a queued job that gets its slot within SCAN_TIMEOUT_SECONDS is submitted, with the whole timeout for the scanner', async () => {
    const h = await harness({}, { SCAN_MAX_INFLIGHT: '1', SCAN_TIMEOUT_SECONDS: '10' });
    const first = await submitted(h, { 'a.json': OK });
    const far = request(await upload('aep_6.pdf'), 'aep_6.pdf', { reply_deadline: '2099-01-01T00:00:00Z' });
    expect(await handleRequest(h.deps, JSON.stringify(far))).toBe('queued');
    h.clock.now += 6000;
    await run(h, 2); // the first job is answered; its slot goes to the queued one
    expect(finals(h).map((e) => e.job_id)).toEqual([first.job_id]);
    const job = (await h.deps.jobs.get(far.job_id))!;
    expect(job.state).toBe('submitted');
    expect(job.deadline).toBe(job.submitted_at! + 10_000);
  });
});

describe('the SMB reader holds the bound itself', () => {
  it('a file larger than the bound it is read with: refused after at most bound + one chunk, never returned', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'samba-bounds-'));
    const share = await startSamba(dir);
    try {
      const folder = new SmbHotFolder({ ...share, timeoutMs: 10_000 });
      fs.mkdirSync(path.join(share.root, 'Output', 'job'), { recursive: true });
      fs.writeFileSync(path.join(share.root, 'Output', 'job', 'a.json'), `"${'x'.repeat(300_000)}"`);
      const [file] = (await folder.poll('job'))!;
      await expect(file.read(100_000)).rejects.toThrow(
        new AnswerRefusedError(
          'a.json has more than 100000 bytes, more than the 100000 allowed (SCAN_MAX_ANSWER_BYTES)',
        ),
      );
      expect((await file.read(300_002)).length).toBe(300_002);
      folder.close();
    } finally {
      await share.service.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

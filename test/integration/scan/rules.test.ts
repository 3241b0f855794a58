import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import fs from 'node:fs';
import path from 'node:path';
import { scanOnce } from '../../../emulator/scanner/scanner';
import { validateEnvelope } from '../../../lib/scan/contract';
import { DynamoDbScanJobStore } from '../../../lib/scan/dynamodb-store';
import { handleRequest, PAYLOAD_CONFLICTS, pollOnce } from '../../../lib/scan/gateway';
import { MAX_INBOX_NAME_BYTES } from '../../../lib/names';
import { FIXTURES, finals, harness, request, runToEnd, scanSuite, settleNats, upload } from '../../support/scan';
import { freePort } from '../../../tools/stack/ports';
import { pollCore } from '../../../functions/scan/poll';
import { newId } from '../../../lib/ident';
import { DynamoDbPollerLease } from '../../../lib/scan/dynamodb-lease';

/**
 * The gateway's rules, each on the real services (DynamoDB Local, s3rver,
 * nats-server, the real filesystem). lib/scan/README.md names and explains them.
 */
scanSuite();

const inputs = (root: string) => fs.readdirSync(path.join(root, 'Input'));

describe('long names: the TEMP name fits, not just the final one', () => {
  it('150 Cyrillic characters reach Input/ (never a false "hot folder unavailable")', async () => {
    const h = await harness();
    const name = `${'Я'.repeat(150)}.pdf`;
    const req = request(await upload('aep_6.pdf'), name);
    expect(await handleRequest(h.deps, JSON.stringify(req))).toBe('started');
    const [inbox] = inputs(h.root);
    expect(inbox).toMatch(new RegExp(`^${req.job_id}_Я+\\.pdf$`));
    expect(Buffer.byteLength(inbox, 'utf8')).toBeLessThanOrEqual(MAX_INBOX_NAME_BYTES - 18);
    expect((await h.deps.jobs.get(req.job_id))!.state).toBe('submitted');
    await runToEnd(h);
    expect(finals(h)).toEqual([
      expect.objectContaining({ status: 'error', error: expect.objectContaining({ code: 'INVALID_DOCUMENT' }) }),
    ]); // the scanner answered
  });
});

describe('rule 29: a file name is rewritten for the share, never a reason to fail the job', () => {
  it('wildcards, colons, quotes, pipes, control characters, trailing dots, a device name: each job is answered', async () => {
    const h = await harness();
    const names: Array<[string, string]> = [
      ['Что это?.pdf', 'Что это_.pdf'],
      ['Отчёт: 2024.pdf', 'Отчёт_ 2024.pdf'],
      ['a*b<c>"d"|e.pdf', 'a_b_c__d__e.pdf'],
      ['tab\there.pdf', 'tab_here.pdf'],
      ['aep?6.pdf. . ', 'aep_6.pdf'], // the scanner finds aep_6's fixture under the rewritten name
      ['CON.pdf', 'CON.pdf'],
    ];
    const jobs: string[] = [];
    for (const [name] of names) {
      const req = request(await upload('aep_6.pdf'), name);
      await handleRequest(h.deps, JSON.stringify(req));
      jobs.push(req.job_id);
      h.clock.now += 1;
    }
    await runToEnd(h, 12);
    expect(inputs(h.root).sort()).toEqual(names.map(([, inbox], i) => `${jobs[i]}_${inbox}.done`).sort());
    const byJob = new Map(finals(h).map((e) => [e.job_id, e]));
    for (const job of jobs) expect(byJob.get(job)?.error?.code).not.toBe('RECOGNITION_FAILED');
    expect(byJob.get(jobs[4])).toMatchObject({ status: 'done' });
  });

  it('only a path separator is refused → RECOGNITION_FAILED "invalid file name"', async () => {
    const h = await harness();
    for (const name of ['../x.pdf', 'a\\b.pdf'])
      await handleRequest(h.deps, JSON.stringify(request(await upload('aep_6.pdf'), name)));
    await settleNats();
    expect(finals(h).map((e) => e.error)).toEqual(
      Array(2).fill({ code: 'RECOGNITION_FAILED', message: 'недопустимое имя файла' }),
    );
    expect(inputs(h.root)).toEqual([]);
  });

  it('a leading dot and a NUL are rewritten, not refused: the jobs are answered (decision 369)', async () => {
    const h = await harness();
    const jobs: string[] = [];
    for (const name of ['.Отчёт.pdf', 'a\u0000b.pdf']) {
      const req = request(await upload('aep_6.pdf'), name);
      await handleRequest(h.deps, JSON.stringify(req));
      jobs.push(req.job_id);
      h.clock.now += 1;
    }
    await runToEnd(h, 12);
    expect(inputs(h.root).sort()).toEqual([`${jobs[0]}__Отчёт.pdf.done`, `${jobs[1]}_a_b.pdf.done`].sort());
    // Answered by the OCR system (no fixture under those names: its "no pair" answer), never "invalid file name".
    for (const e of finals(h)) expect(e.error?.message).not.toBe('недопустимое имя файла');
    expect(finals(h)).toHaveLength(2);
  });
});

describe('a poll error is not the end', () => {
  it('one job\'s hot-folder error never stops the pass; all-failed → "hot folder unavailable", some-failed → TIMEOUT', async () => {
    const h = await harness({}, { SCAN_TIMEOUT_SECONDS: '20' });
    const key = await upload('aep_6.pdf');
    const [broken, good, flaky] = [request(key, 'aep_6.pdf'), request(key, 'aep_6.pdf'), request(key, 'aep_6.pdf')];
    for (const r of [broken, good, flaky]) {
      await handleRequest(h.deps, JSON.stringify(r));
      h.clock.now += 1; // oldest first: the broken job comes first in every pass
    }
    const output = path.join(h.root, 'Output');
    fs.mkdirSync(output, { recursive: true });
    fs.writeFileSync(path.join(output, broken.job_id), 'not a folder'); // every poll of it fails (ENOTDIR)
    await pollOnce(h.deps); // flaky: one poll answers (no folder yet)
    fs.writeFileSync(path.join(output, flaky.job_id), 'not a folder'); // from now on its polls fail
    // The scanner answers the good job only.
    fs.renameSync(
      path.join(
        h.root,
        'Input',
        inputs(h.root).find((n) => n.startsWith(broken.job_id))!,
      ),
      path.join(h.root, 'broken.hold'),
    );
    fs.renameSync(
      path.join(
        h.root,
        'Input',
        inputs(h.root).find((n) => n.startsWith(flaky.job_id))!,
      ),
      path.join(h.root, 'flaky.hold'),
    );
    await scanOnce({ root: h.root, fixturesDir: FIXTURES });
    for (let i = 0; i < 3; i++, h.clock.now += 2500) await pollOnce(h.deps);
    await settleNats();
    expect(finals(h).map((e) => e.job_id)).toEqual([good.job_id]); // finished although the job before it threw every pass
    expect(h.logs.filter((l) => l.event === 'scan_poll_failed').length).toBeGreaterThanOrEqual(6);
    h.clock.now += 20_000;
    await pollOnce(h.deps);
    await settleNats();
    const by = (id: string) => finals(h).find((e) => e.job_id === id);
    expect(by(broken.job_id)?.error).toEqual({ code: 'RECOGNITION_FAILED', message: 'горячая папка недоступна' });
    expect(by(flaky.job_id)?.error?.code).toBe('TIMEOUT');
    expect(await h.deps.jobs.slotsInUse()).toBe(0);
  });
});

describe("no second answer under a live job's id", () => {
  it('a contract-breaking request carrying the id of a job in work, or done, publishes nothing and is logged as a warning', async () => {
    const h = await harness();
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    await handleRequest(h.deps, JSON.stringify(req));
    expect(await handleRequest(h.deps, JSON.stringify({ ...req, schema_version: '2.0' }))).toBe('ignored');
    await runToEnd(h);
    expect(await handleRequest(h.deps, JSON.stringify({ ...req, pipeline: 'audio' }))).toBe('ignored');
    await settleNats();
    expect(h.envelopes.map((e) => e.status)).toEqual(['processing', 'done']);
    expect(h.logs.filter((l) => l.level === 'warn' && l.event === 'scan_request_mismatch_for_live_job')).toHaveLength(
      2,
    );
  });
});

describe('SCHEMA_MISMATCH envelopes', () => {
  it('only with a readable job_id AND file_id; attempt from the body when an integer ≥ 1, else 1', async () => {
    const h = await harness();
    const base = request('k', 'a.pdf', { schema_version: '2.0' });
    expect(await handleRequest(h.deps, JSON.stringify({ ...base, file_id: 'not-a-uuid' }))).toBe('dropped');
    expect(await handleRequest(h.deps, JSON.stringify({ ...base, attempt: 0 }))).toBe('mismatch');
    const other = request('k', 'a.pdf', { schema_version: '2.0', attempt: 4 });
    expect(await handleRequest(h.deps, JSON.stringify(other))).toBe('mismatch');
    await settleNats();
    expect(h.envelopes.map((e) => [e.job_id, e.file_id, e.attempt, e.error?.code])).toEqual([
      [base.job_id, base.file_id, 1, 'SCHEMA_MISMATCH'],
      [other.job_id, other.file_id, 4, 'SCHEMA_MISMATCH'],
    ]);
    expect(h.envelopes.every((e) => validateEnvelope(e))).toBe(true);
  });
});

describe('a late slot', () => {
  it('a job that gets its slot after its reply_deadline answers TIMEOUT without reading S3 or writing into Input/', async () => {
    const h = await harness({}, { SCAN_MAX_INFLIGHT: '1' });
    const reads: string[] = [];
    const real = h.deps.files;
    h.deps.files = {
      read: (b, k) => real.read(b, k),
      open: (b, k) => (reads.push(k), real.open(b, k)),
      writeRaw: (k, b) => real.writeRaw(k, b),
    };
    const first = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    const late = request(await upload('aep_6.pdf'), 'aep_6.pdf', { reply_deadline: '2026-12-02T12:00:03Z' });
    expect(await handleRequest(h.deps, JSON.stringify(first))).toBe('started');
    expect(await handleRequest(h.deps, JSON.stringify(late))).toBe('queued');
    h.clock.now += 5000; // the late job's deadline passes while it waits for the slot
    await runToEnd(h);
    const answer = finals(h).find((e) => e.job_id === late.job_id)!;
    expect(answer.error).toEqual({
      code: 'TIMEOUT',
      message: 'the job got no slot before its reply deadline (at most SCAN_TIMEOUT_SECONDS after the request)',
    });
    expect(reads).toEqual([first.s3.key]);
    expect(inputs(h.root).filter((n) => n.startsWith(late.job_id))).toEqual([]);
    expect(await h.deps.jobs.slotsInUse()).toBe(0);
  });
});

describe('the deadline clock starts when the file is in the hot folder', () => {
  it("a slow S3 read does not eat the job's time", async () => {
    const h = await harness({}, { SCAN_TIMEOUT_SECONDS: '10' });
    const real = h.deps.files;
    h.deps.files = {
      read: (b, k) => real.read(b, k),
      open: async (b, k) => {
        h.clock.now += 8000; // the read takes 8 s
        return real.open(b, k);
      },
      writeRaw: (k, b) => real.writeRaw(k, b),
    };
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    const slotAt = h.clock.now;
    await handleRequest(h.deps, JSON.stringify(req));
    const job = (await h.deps.jobs.get(req.job_id))!;
    expect(job.submitted_at).toBe(slotAt + 8000);
    expect(job.deadline).toBe(slotAt + 8000 + 10_000);
    h.clock.now += 5000; // 13 s after the slot, 5 s after the write
    await pollOnce(h.deps);
    await settleNats();
    expect(finals(h)).toEqual([]);
  });
});

describe('folders', () => {
  it('put creates a missing Input/ (and Tmp/), private; only a missing ROOT is "hot folder unavailable"', async () => {
    const h = await harness();
    fs.rmSync(path.join(h.root, 'Input'), { recursive: true });
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    expect(await h.deps.hotFolder.healthy()).toBe(true); // the root is there
    expect(await handleRequest(h.deps, JSON.stringify(req))).toBe('started');
    expect(inputs(h.root)).toHaveLength(1);
    for (const dir of ['Input', 'Tmp']) expect(fs.statSync(path.join(h.root, dir)).mode & 0o777).toBe(0o700);
    await settleNats();
    expect(finals(h)).toEqual([]);
  });
});

describe('the timing settings', () => {
  it('a fractional settle window is honoured', async () => {
    const h = await harness({}, { SCAN_SETTLE_SECONDS: '0.5' });
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    await handleRequest(h.deps, JSON.stringify(req));
    await scanOnce({ root: h.root, fixturesDir: FIXTURES });
    await pollOnce(h.deps); // first seen
    h.clock.now += 400;
    await pollOnce(h.deps);
    await settleNats();
    expect(finals(h)).toEqual([]);
    h.clock.now += 100;
    await pollOnce(h.deps);
    await settleNats();
    expect(finals(h)).toHaveLength(1);
  });
});

describe('messages', () => {
  it("an all-failed set answers with that file's own message; the file name is in the warnings", async () => {
    const h = await harness();
    const req = request(await upload('aep_5.PDF'), 'aep_5.PDF');
    await handleRequest(h.deps, JSON.stringify(req));
    await runToEnd(h);
    const fixture = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'aep_5.json'), 'utf8'));
    const [answer] = finals(h);
    expect(answer.error).toEqual({ code: 'INVALID_DOCUMENT', message: fixture.error.message });
    expect(answer.metrics.warnings).toEqual([`aep_5.json: INVALID_DOCUMENT: ${fixture.error.message}`]);
  });
});

describe('duplicates', () => {
  it('a duplicate job_id with another payload is acked, logged as a conflict with both hashes, and counted', async () => {
    const h = await harness();
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    await handleRequest(h.deps, JSON.stringify(req));
    expect(await handleRequest(h.deps, JSON.stringify({ ...req, attempt: 2 }))).toBe('duplicate'); // a plain re-send
    expect(
      await handleRequest(h.deps, JSON.stringify({ ...req, attempt: 3, s3: { ...req.s3, key: 'inbox/other.pdf' } })),
    ).toBe('duplicate');
    await settleNats();
    expect(h.envelopes.map((e) => [e.status, e.attempt])).toEqual([
      ['processing', 1],
      ['processing', 2],
      ['processing', 3],
    ]);
    expect(inputs(h.root)).toHaveLength(1);
    const conflicts = h.logs.filter((l) => l.event === 'scan_request_payload_conflict');
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0].fields.stored_hash).toMatch(/^[0-9a-f]{16}$/);
    expect(conflicts[0].fields.request_hash).toMatch(/^[0-9a-f]{16}$/);
    expect(conflicts[0].fields.stored_hash).not.toBe(conflicts[0].fields.request_hash);
    expect(await h.deps.jobs.counter(PAYLOAD_CONFLICTS)).toBe(1);
  });

  it('an upper-case and a lower-case spelling of one job are the same job: one file, one answer', async () => {
    const h = await harness();
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    expect(await handleRequest(h.deps, JSON.stringify({ ...req, job_id: req.job_id.toUpperCase() }))).toBe('started');
    expect(await handleRequest(h.deps, JSON.stringify(req))).toBe('duplicate');
    expect(inputs(h.root)).toEqual([`${req.job_id}_aep_6.pdf`]);
    await runToEnd(h);
    expect(finals(h)).toEqual([expect.objectContaining({ job_id: req.job_id, status: 'done' })]);
    expect(h.envelopes.every((e) => e.job_id === req.job_id)).toBe(true);
  });
});

describe('the store is down', () => {
  it('a valid request is answered UNKNOWN_ERROR (nothing thrown); a poll pass fails alone and is reported', async () => {
    const port = await freePort();
    const dead = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: `http://127.0.0.1:${port}`,
        region: 'us-east-1',
        maxAttempts: 1,
        credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
      }),
    );
    const h = await harness();
    h.deps.jobs = new DynamoDbScanJobStore(dead, 'no-table');
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    expect(await handleRequest(h.deps, JSON.stringify(req))).toBe('failed');
    expect(await handleRequest(h.deps, JSON.stringify({ ...req, schema_version: '2.0' }))).toBe('mismatch');
    await settleNats();
    expect(h.envelopes.map((e) => e.error?.code)).toEqual(['UNKNOWN_ERROR', 'SCHEMA_MISMATCH']);
    expect(inputs(h.root)).toEqual([]);
    await expect(pollOnce(h.deps)).rejects.toThrow();
    const poller = {
      lease: new DynamoDbPollerLease(dead, 'no-table'),
      start: async () => undefined,
      newId: () => newId(),
    };
    // The invocation ends quietly (the lease cannot even be taken).
    expect(
      await pollCore(
        () => h.deps,
        () => poller,
        {},
        30_000,
      ),
    ).toEqual({ passes: 0, finished: 0, failed: true });
    dead.destroy();
  });
});

import { GetObjectCommand } from '@aws-sdk/client-s3';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { scanOnce } from '../../../emulator/scanner/scanner';
import { validateEnvelope } from '../../../lib/scan/contract';
import { handleRequest, pollOnce } from '../../../lib/scan/gateway';
import { NullNormalizer } from '../../../lib/scan/normalizer';
import {
  aws,
  bucket,
  FIXTURES,
  finals,
  harness,
  nats,
  request,
  runToEnd,
  scanSuite,
  settleNats,
  upload,
} from '../../support/scan';

/** The gateway on DynamoDB Local, s3rver, nats-server and a real hot folder, the scanner emulator in-process. */
scanSuite();

describe('scan gateway', () => {
  it('aep_3.pdf: ack, then one envelope with a warning about aep_3_ofr.json; raw holds both files', async () => {
    const h = await harness();
    const req = request(await upload('aep_3.pdf'), 'aep_3.pdf');
    expect(await handleRequest(h.deps, JSON.stringify(req))).toBe('started');
    await runToEnd(h);
    expect(h.envelopes.map((e) => e.status)).toEqual(['processing', 'done']);
    const done = h.envelopes[1];
    expect(validateEnvelope(done)).toBe(true);
    expect(done).toMatchObject({
      job_id: req.job_id,
      attempt: 1,
      raw_s3_key: `raw/${req.job_id}.json`,
      metrics: { warnings: [expect.stringContaining('aep_3_ofr.json')] },
    });
    const raw = JSON.parse(
      await (
        await aws.s3.send(new GetObjectCommand({ Bucket: bucket, Key: done.raw_s3_key! }))
      ).Body!.transformToString(),
    );
    expect(raw.files.map((f: { name: string }) => f.name)).toEqual(['aep_3.json', 'aep_3_ofr.json']);
    expect(h.msgIds).toEqual([`${req.job_id}:1:processing`, `${req.job_id}:1:done`]);
    expect(await h.deps.jobs.slotsInUse()).toBe(0);
  });

  it('aep_6: done without warnings; aep_5.PDF: INVALID_DOCUMENT with raw_s3_key; NullNormalizer: NOT_IMPLEMENTED', async () => {
    const h = await harness();
    const six = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    const five = request(await upload('aep_5.PDF'), 'aep_5.PDF');
    await handleRequest(h.deps, JSON.stringify(six));
    await handleRequest(h.deps, JSON.stringify(five));
    await runToEnd(h);
    const by = (id: string) => finals(h).find((e) => e.job_id === id)!;
    expect(by(six.job_id)).toMatchObject({ status: 'done', metrics: { warnings: [] } });
    expect(by(five.job_id)).toMatchObject({
      status: 'error',
      error: { code: 'INVALID_DOCUMENT' },
      raw_s3_key: `raw/${five.job_id}.json`,
    });

    const n = await harness({ normalizer: new NullNormalizer() }); // its own gateway, same fixtures
    const again = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    await handleRequest(n.deps, JSON.stringify(again));
    await runToEnd(n);
    expect(finals(n)[0].error?.code).toBe('NOT_IMPLEMENTED');
  });

  it('a duplicate request (concurrent and later) re-acks with its attempt and writes ONE file', async () => {
    const h = await harness();
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    const answers = await Promise.all(
      [1, 2, 3].map((attempt) => handleRequest(h.deps, JSON.stringify({ ...req, attempt }))),
    );
    expect(answers.filter((a) => a === 'duplicate')).toHaveLength(2);
    expect(await handleRequest(h.deps, JSON.stringify({ ...req, attempt: 7 }))).toBe('duplicate');
    await nats().flush();
    expect(fs.readdirSync(path.join(h.root, 'Input'))).toHaveLength(1);
    expect(h.envelopes.map((e) => e.attempt).sort()).toEqual([1, 2, 3, 7]);
  });

  describe('every row of the error table', () => {
    it('SCHEMA_MISMATCH when ids are readable; dropped silently when not', async () => {
      const h = await harness();
      const bad = request('k', 'a.pdf', { schema_version: '2.0' });
      expect(await handleRequest(h.deps, JSON.stringify(bad))).toBe('mismatch');
      expect(await handleRequest(h.deps, 'garbage')).toBe('dropped');
      await nats().flush();
      expect(h.envelopes).toEqual([
        expect.objectContaining({
          status: 'error',
          job_id: bad.job_id,
          error: expect.objectContaining({ code: 'SCHEMA_MISMATCH' }),
        }),
      ]);
      expect(await h.deps.jobs.get(bad.job_id)).toBeUndefined(); // no ack, no job
    });

    it.each([
      ['the S3 object is missing', (key: string) => ({ s3: { bucket, key: `${key}.missing` } }), 'FILE_READ_ERROR'],
      [
        'the bucket is not the configured one',
        (key: string) => ({ s3: { bucket: 'someone-elses-bucket', key } }),
        'FILE_READ_ERROR',
      ],
      [
        'the key climbs out of its prefix',
        (key: string) => ({ s3: { bucket, key: `${key}/../../../etc/passwd` } }),
        'FILE_READ_ERROR',
      ],
      ['the name is invalid', () => ({ original_name: '../../etc/passwd' }), 'RECOGNITION_FAILED'],
      ['the name is a backslash path', () => ({ original_name: '..\\..\\boot.ini' }), 'RECOGNITION_FAILED'],
    ])('%s → its error, slot released', async (_what, override, code) => {
      const h = await harness();
      const key = await upload('aep_6.pdf');
      await handleRequest(h.deps, JSON.stringify(request(key, 'aep_6.pdf', override(key))));
      await nats().flush();
      expect(finals(h)).toEqual([
        expect.objectContaining({ status: 'error', error: expect.objectContaining({ code }) }),
      ]);
      expect(fs.readdirSync(path.join(h.root, 'Input'))).toEqual([]);
      expect(await h.deps.jobs.slotsInUse()).toBe(0);
    });

    it('the hot folder root is missing → RECOGNITION_FAILED "hot folder unavailable"', async () => {
      const h = await harness();
      fs.rmSync(h.root, { recursive: true }); // the share is gone
      await handleRequest(h.deps, JSON.stringify(request(await upload('aep_6.pdf'), 'aep_6.pdf')));
      await nats().flush();
      expect(finals(h)[0].error).toEqual({ code: 'RECOGNITION_FAILED', message: 'горячая папка недоступна' });
      expect(await h.deps.jobs.slotsInUse()).toBe(0);
    });

    it('a non-JSON answer (all files failed) → INVALID_FORMAT', async () => {
      const h = await harness();
      const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
      await handleRequest(h.deps, JSON.stringify(req));
      fs.mkdirSync(path.join(h.root, 'Output', req.job_id), { recursive: true });
      fs.writeFileSync(path.join(h.root, 'Output', req.job_id, 'answer.json'), '<html>oops');
      for (let i = 0; i < 3; i++, h.clock.now += 2500) await pollOnce(h.deps);
      await nats().flush();
      expect(finals(h)[0]).toMatchObject({ error: { code: 'INVALID_FORMAT' }, raw_s3_key: `raw/${req.job_id}.json` });
    });

    it('the normalizer throws → UNKNOWN_ERROR, with the raw answer saved', async () => {
      const h = await harness({
        normalizer: {
          normalize: () => {
            throw new Error('bug');
          },
        },
      });
      const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
      await handleRequest(h.deps, JSON.stringify(req));
      await runToEnd(h);
      expect(finals(h)[0]).toMatchObject({ error: { code: 'UNKNOWN_ERROR' }, raw_s3_key: `raw/${req.job_id}.json` });
    });

    it('the raw write fails → UNKNOWN_ERROR without raw_s3_key', async () => {
      const h = await harness();
      const real = h.deps.files;
      h.deps.files = {
        read: (b, k) => real.read(b, k),
        open: (b, k) => real.open(b, k),
        writeRaw: async () => {
          throw new Error('S3 down');
        },
      };
      await handleRequest(h.deps, JSON.stringify(request(await upload('aep_6.pdf'), 'aep_6.pdf')));
      await runToEnd(h);
      expect(finals(h)[0]).toMatchObject({ error: { code: 'UNKNOWN_ERROR' }, raw_s3_key: null });
      expect(await h.deps.jobs.slotsInUse()).toBe(0);
    });

    it('the deadline passes → TIMEOUT, the inbox file left in place; a set that never settles → TIMEOUT', async () => {
      const h = await harness();
      const req = request(await upload('aep_6.pdf'), 'aep_6.pdf', { reply_deadline: '2026-12-02T12:00:05Z' });
      await handleRequest(h.deps, JSON.stringify(req));
      h.clock.now += 10_000;
      await pollOnce(h.deps);
      await nats().flush();
      expect(finals(h)[0].error?.code).toBe('TIMEOUT');
      expect(fs.readdirSync(path.join(h.root, 'Input'))).toEqual([`${req.job_id}_aep_6.pdf`]);

      const g = await harness();
      const growing = request(await upload('aep_6.pdf'), 'aep_6.pdf', { reply_deadline: '2026-12-02T12:00:20Z' });
      await handleRequest(g.deps, JSON.stringify(growing));
      const file = path.join(g.root, 'Output', growing.job_id, 'a.json');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      for (let i = 0; i < 12; i++, g.clock.now += 2500) {
        fs.appendFileSync(file, ' '); // never stops growing
        await pollOnce(g.deps);
      }
      await nats().flush();
      expect(finals(g)).toEqual([
        expect.objectContaining({ error: { code: 'TIMEOUT', message: 'the answer set never settled' } }),
      ]);
    });
  });

  it('a job read stale from the state index is neither started twice nor given a second slot', async () => {
    const h = await harness();
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    expect(await handleRequest(h.deps, JSON.stringify(req))).toBe('started');
    const submitted = (await h.deps.jobs.get(req.job_id))!;
    expect(submitted.state).toBe('submitted');
    expect(
      await h.deps.jobs.startSubmitted(submitted, h.clock.now, 4, `${req.job_id}_b.pdf`, h.clock.now + 1),
    ).toBeUndefined();
    expect(await h.deps.jobs.inState('queued')).toEqual([]);
    expect(await h.deps.jobs.slotsInUse()).toBe(1);
    expect(fs.readdirSync(path.join(h.root, 'Input'))).toHaveLength(1);
  });

  it('two overlapping polls publish each terminal envelope exactly once', async () => {
    const h = await harness();
    const reqs = [];
    for (const name of ['aep_3.pdf', 'aep_6.pdf', 'aep_5.PDF']) reqs.push(request(await upload(name), name));
    for (const r of reqs) await handleRequest(h.deps, JSON.stringify(r));
    await scanOnce({ root: h.root, fixturesDir: FIXTURES });
    for (let i = 0; i < 3; i++, h.clock.now += 2500)
      await Promise.all([pollOnce(h.deps), pollOnce(h.deps), pollOnce(h.deps)]);
    await nats().flush();
    await new Promise((r) => setTimeout(r, 50));
    const counts = reqs.map((r) => finals(h).filter((e) => e.job_id === r.job_id).length);
    expect(counts).toEqual([1, 1, 1]);
  });

  it('a crash between storing and publishing is re-published by the next poll, same Nats-Msg-Id', async () => {
    let fail = true;
    const h = await harness();
    const publish = h.deps.publish;
    h.deps.publish = async (s, d, id) => {
      if (fail && !id.endsWith(':processing')) throw new Error('connection lost');
      return publish(s, d, id);
    };
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    await handleRequest(h.deps, JSON.stringify(req));
    await runToEnd(h, 3);
    expect(finals(h)).toEqual([]);
    expect((await h.deps.jobs.get(req.job_id))!.result?.status).toBe('done'); // stored before publishing
    fail = false;
    h.clock.now += 31_000; // the lease of the failed publisher runs out
    await Promise.all([pollOnce(h.deps), pollOnce(h.deps)]);
    await nats().flush();
    await new Promise((r) => setTimeout(r, 50));
    expect(finals(h)).toHaveLength(1);
    expect(h.msgIds[h.msgIds.length - 1]).toBe(`${req.job_id}:1:done`);
  });

  it('racing starts of queued jobs (three callers per job, all at once) never take more than the slots', async () => {
    const h = await harness({}, { SCAN_MAX_INFLIGHT: '1' });
    const key = await upload('aep_6.pdf');
    await handleRequest(h.deps, JSON.stringify(request(key, 'aep_6.pdf'))); // holds the only slot
    for (let i = 0; i < 6; i++) await handleRequest(h.deps, JSON.stringify(request(key, 'aep_6.pdf')));
    const queued = await h.deps.jobs.inState('queued');
    expect(queued).toHaveLength(6);
    // The holder finishes (frees one slot); then every queued job is started by three racing callers at once.
    const holder = (await h.deps.jobs.inState('submitted'))[0];
    await h.deps.jobs.finish(holder, { ...holder.request, status: 'error' } as never, h.clock.now);
    const results = await Promise.all(
      queued.flatMap((job) =>
        [0, 1, 2].map(() => h.deps.jobs.startSubmitted(job, h.clock.now, 1, `${job.job_id}_a.pdf`, h.clock.now + 1)),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await h.deps.jobs.slotsInUse()).toBe(1);
    expect(await h.deps.jobs.inState('queued')).toHaveLength(5);
  });

  it('10 jobs with SCAN_MAX_INFLIGHT=4: never more than 4 files await an answer; the counter returns to 0', async () => {
    const h = await harness({}, { SCAN_MAX_INFLIGHT: '4' });
    const key = await upload('aep_6.pdf');
    for (let i = 0; i < 10; i++) await handleRequest(h.deps, JSON.stringify(request(key, 'aep_6.pdf')));
    const awaiting = () => fs.readdirSync(path.join(h.root, 'Input')).filter((f) => !f.endsWith('.done')).length;
    let most = 0;
    for (let i = 0; i < 30 && finals(h).length < 10; i++) {
      most = Math.max(most, awaiting(), await h.deps.jobs.slotsInUse());
      await scanOnce({ root: h.root, fixturesDir: FIXTURES });
      await pollOnce(h.deps);
      h.clock.now += 2500;
      await nats().flush();
    }
    expect(most).toBe(4);
    expect(finals(h)).toHaveLength(10);
    expect(await h.deps.jobs.slotsInUse()).toBe(0);
  });
});

describe('scan inputs stream from S3 into the hot folder', () => {
  it('a large input lands whole in Input/ (bytes as uploaded), through Tmp/', async () => {
    const h = await harness();
    const bytes = Buffer.alloc(24 * 1024 * 1024 + 7, 0x25);
    const req = request(await upload('big.pdf', bytes), 'big.pdf');
    expect(await handleRequest(h.deps, JSON.stringify(req))).toBe('started');
    expect(fs.readFileSync(path.join(h.root, 'Input', `${req.job_id}_big.pdf`)).equals(bytes)).toBe(true);
    expect(fs.readdirSync(path.join(h.root, 'Tmp'))).toEqual([]);
  });

  it('the S3 body breaking mid-stream: FILE_READ_ERROR, no partial file in Tmp/ or Input/, the slot back', async () => {
    const h = await harness();
    h.deps.files = {
      ...h.deps.files,
      open: async () => {
        let sent = 0;
        const body = new Readable({
          read() {
            if (sent++ < 3) this.push(Buffer.alloc(64 * 1024, 1));
            else this.destroy(new Error('socket hang up'));
          },
        });
        return { length: 10 * 64 * 1024, body };
      },
    };
    const req = request(await upload('aep_6.pdf'), 'aep_6.pdf');
    await handleRequest(h.deps, JSON.stringify(req));
    await settleNats();
    expect(finals(h)).toEqual([
      expect.objectContaining({
        job_id: req.job_id,
        error: { code: 'FILE_READ_ERROR', message: expect.stringMatching(/^cannot read s3:\/\/.+: socket hang up$/) },
      }),
    ]);
    expect(fs.readdirSync(path.join(h.root, 'Input'))).toEqual([]);
    expect(fs.readdirSync(path.join(h.root, 'Tmp'))).toEqual([]);
    expect(await h.deps.jobs.slotsInUse()).toBe(0);
  });
});

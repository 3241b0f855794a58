import { PutObjectCommand } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { NatsConnection } from 'nats';
import { Envelope, validateEnvelope } from '../../lib/scan/contract';
import { bearer } from '../support/http';
import { httpUrl, invokeScheduled, stackClients, stackConfig, stackNats } from '../support/stack';

/** The scan gateway exactly as the core system uses it: S3 + NATS in, NATS out; the scanner emulator runs as its own process. */
describe('scan gateway through NATS and serverless offline', () => {
  const aws = stackClients();
  const bucket = stackConfig().buckets.files;
  let nc: NatsConnection;
  const envelopes: Envelope[] = [];
  beforeAll(async () => {
    nc = await stackNats();
    nc.subscribe('scan.results', { callback: (_e, m) => envelopes.push(JSON.parse(new TextDecoder().decode(m.data))) });
    await nc.flush();
  });
  afterAll(async () => {
    await nc.close();
    aws.s3.destroy();
  });

  const until = async (cond: () => boolean, ms: number) => {
    for (const end = Date.now() + ms; !cond() && Date.now() < end;) await new Promise((r) => setTimeout(r, 100));
  };

  async function scanThroughNats(input: string): Promise<{ job: string; final: Envelope }> {
    const key = `inbox/${randomUUID()}/${input}`;
    await aws.s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: fs.readFileSync(path.resolve(__dirname, '../../fixtures/ocr/inputs', input)),
      }),
    );
    const job = randomUUID();
    const request = {
      schema_version: '1.0',
      job_id: job,
      file_id: randomUUID(),
      attempt: 1,
      pipeline: 'image',
      s3: { bucket, key },
      original_name: input,
      reply_deadline: new Date(Date.now() + 600_000).toISOString(),
    };
    nc.publish('scan.requests', JSON.stringify(request));
    await until(() => envelopes.some((e) => e.job_id === job), 15_000);
    expect(envelopes.find((e) => e.job_id === job)).toMatchObject({ status: 'processing', attempt: 1 });

    // The schedule is off in tests: drive the poll as EventBridge would, until the answer is out.
    for (let i = 0; i < 5 && !envelopes.some((e) => e.job_id === job && e.status !== 'processing'); i++) {
      expect((await invokeScheduled('scanPoll')).FunctionError).toBeUndefined();
      await until(() => envelopes.some((e) => e.job_id === job && e.status !== 'processing'), 3000);
    }
    const final = envelopes.find((e) => e.job_id === job && e.status !== 'processing')!;
    expect(validateEnvelope(final)).toBe(true);
    return { job, final };
  }

  it('aep_3.pdf: processing ack at once, then done with the aep_3_ofr warning', async () => {
    const { job, final } = await scanThroughNats('aep_3.pdf');
    expect(final).toMatchObject({
      status: 'done',
      raw_s3_key: `raw/${job}.json`,
      metrics: { warnings: [expect.stringContaining('aep_3_ofr.json: INVALID_DOCUMENT')] },
    });
    // The poller that answered recorded what woke it; the deep health check says so (the local folder's watcher).
    const deep = await fetch(httpUrl('/healthcheck/deep'), { headers: bearer() });
    expect((await deep.json()).hotfolder_wake).toEqual({ mode: 'notify', recorded_s_ago: expect.any(Number) });
  }, 60_000);

  it('aep_6.pdf: done without warnings; aep_5.PDF and an unknown file: INVALID_DOCUMENT with raw_s3_key', async () => {
    const six = await scanThroughNats('aep_6.pdf');
    expect(six.final).toMatchObject({ status: 'done', metrics: { warnings: [] } });
    for (const input of ['aep_5.PDF', 'unknown.pdf']) {
      const { job, final } = await scanThroughNats(input);
      expect(final).toMatchObject({
        status: 'error',
        error: { code: 'INVALID_DOCUMENT' },
        raw_s3_key: `raw/${job}.json`,
      });
    }
  }, 90_000);

  it('survives a burst of garbage, oversize and traversal requests: the queue group still takes the next good one', async () => {
    const job = randomUUID();
    const traversal = {
      schema_version: '1.0',
      job_id: job,
      file_id: randomUUID(),
      attempt: 1,
      pipeline: 'image',
      s3: { bucket, key: 'inbox/../../etc/passwd' },
      original_name: '../x.pdf',
      reply_deadline: new Date(Date.now() + 60_000).toISOString(),
    };
    for (let i = 0; i < 20; i++) {
      nc.publish('scan.requests', '{"job_id":');
      nc.publish('scan.requests', new Uint8Array([0xff, 0xfe, 0x00, 0x01]));
      nc.publish('scan.requests', JSON.stringify({ pad: 'x'.repeat(200 * 1024) })); // over the bridge's bound
      nc.publish('scan.requests', JSON.stringify({ pad: 'x'.repeat(70 * 1024) })); // under it, over the function's
    }
    nc.publish('scan.requests', JSON.stringify(traversal));
    // The traversal request is acked then refused on reading (FILE_READ_ERROR): the ack proves the subject still flows.
    await until(() => envelopes.some((e) => e.job_id === job), 15_000);
    expect(envelopes.find((e) => e.job_id === job)).toMatchObject({ status: 'processing' });
    await until(() => envelopes.some((e) => e.job_id === job && e.status === 'error'), 10_000);
    expect(envelopes.find((e) => e.job_id === job && e.status === 'error')).toMatchObject({
      error: { code: 'FILE_READ_ERROR' },
      raw_s3_key: null,
    });

    const after = await scanThroughNats('aep_6.pdf');
    expect(after.final).toMatchObject({ status: 'done' });
  }, 90_000);
});

import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { connect, NatsConnection } from 'nats';
import { Envelope, validateEnvelope } from '../../lib/scan/contract';
import { stackClients, stackConfig } from '../support/stack';

/** The scan gateway exactly as the core system uses it: S3 + NATS in, NATS out; the scanner emulator runs as its own process. */
describe('scan gateway through NATS and serverless offline', () => {
  const aws = stackClients();
  const bucket = stackConfig().buckets.files;
  const lambda = new LambdaClient({ endpoint: process.env.TEST_LAMBDA_URL, region: 'us-east-1' });
  let nc: NatsConnection;
  const envelopes: Envelope[] = [];
  beforeAll(async () => {
    nc = await connect({ servers: process.env.NATS_URL!.split(',') });
    nc.subscribe('scan.results', { callback: (_e, m) => envelopes.push(JSON.parse(new TextDecoder().decode(m.data))) });
    await nc.flush();
  });
  afterAll(async () => {
    await nc.close();
    lambda.destroy();
    aws.s3.destroy();
  });

  const until = async (cond: () => boolean, ms: number) => {
    for (const end = Date.now() + ms; !cond() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 100));
  };

  it('aep_3.pdf: processing ack at once, then done with the aep_3_ofr warning', async () => {
    const key = `inbox/${randomUUID()}/aep_3.pdf`;
    await aws.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: fs.readFileSync(path.resolve(__dirname, '../../fixtures/ocr/inputs/aep_3.pdf')) }));
    const job = randomUUID();
    const request = { schema_version: '1.0', job_id: job, file_id: randomUUID(), attempt: 1, pipeline: 'image', s3: { bucket, key }, original_name: 'aep_3.pdf', reply_deadline: new Date(Date.now() + 600_000).toISOString() };
    nc.publish('scan.requests', JSON.stringify(request));
    await until(() => envelopes.some((e) => e.job_id === job), 15_000);
    expect(envelopes.find((e) => e.job_id === job)).toMatchObject({ status: 'processing', attempt: 1 });

    // The schedule is off in tests: drive the poll as EventBridge would.
    const scheduled = { version: '0', id: randomUUID(), 'detail-type': 'Scheduled Event', source: 'aws.events', time: new Date().toISOString(), detail: {} };
    const out = await lambda.send(new InvokeCommand({ FunctionName: 'torrent-scan-sync-test-scanPoll', Payload: new TextEncoder().encode(JSON.stringify(scheduled)) }));
    expect(out.FunctionError).toBeUndefined();
    await until(() => envelopes.some((e) => e.job_id === job && e.status !== 'processing'), 10_000);
    const final = envelopes.find((e) => e.job_id === job && e.status !== 'processing')!;
    expect(validateEnvelope(final)).toBe(true);
    expect(final).toMatchObject({ status: 'done', raw_s3_key: `raw/${job}.json`, metrics: { warnings: [expect.stringContaining('aep_3_ofr.json: INVALID_DOCUMENT')] } });
  }, 60_000);
});

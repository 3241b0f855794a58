import { PutObjectCommand } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { NatsConnection } from 'nats';
import type { Envelope } from '../../lib/scan/contract';
import { call } from '../support/http';
import { invokeScheduled, stackClients, stackConfig, stackNats } from '../support/stack';

/**
 * Scan requests that the schema ALLOWS but the store could not hold (extra
 * fields named `__proto__`/`constructor`, numbers that parse to Infinity,
 * nesting deeper than DynamoDB's 32 levels) and id spellings the contract
 * refuses, as a burst through NATS into `serverless offline`. Afterwards the
 * process still answers /healthcheck, each hostile request got what the
 * contract owes it, nothing we did not name was stored, and a good scan
 * completes end to end.
 */
const aws = stackClients();
const cfg = stackConfig();
const bucket = cfg.buckets.files;
let nc: NatsConnection;
const envelopes: Envelope[] = [];

beforeAll(async () => {
  nc = await stackNats();
  nc.subscribe('scan.results', { callback: (_e, m) => envelopes.push(JSON.parse(new TextDecoder().decode(m.data))) });
  await nc.flush();
});
afterAll(async () => {
  await nc.close();
  aws.dynamodb.destroy();
  aws.s3.destroy();
});

const until = async (cond: () => boolean, ms: number) => {
  for (const end = Date.now() + ms; !cond() && Date.now() < end;) await new Promise((r) => setTimeout(r, 100));
};
const base = (over: Record<string, unknown> = {}) => ({
  schema_version: '1.0',
  job_id: randomUUID(),
  file_id: randomUUID(),
  attempt: 1,
  pipeline: 'image',
  s3: { bucket, key: `inbox/${randomUUID()}/missing.pdf` },
  original_name: 'a.pdf',
  reply_deadline: new Date(Date.now() + 600_000).toISOString(),
  ...over,
});
/** Valid contract fields, then hostile extras the schema lets through (written as raw JSON text). */
const hostile = (extra: string, over: Record<string, unknown> = {}) => {
  const req = base(over);
  return { req, text: `{${extra},${JSON.stringify(req).slice(1)}` };
};
const poll = () => invokeScheduled('scanPoll');

it('a burst of hostile-but-schema-valid requests: every one answered as the contract says, nothing foreign stored, the service still serves', async () => {
  const deep = `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`;
  const burst = [
    hostile('"__proto__":{"polluted":true}'),
    hostile('"constructor":{"prototype":{"polluted":true}}'),
    hostile('"huge":1e400,"tiny":-1e400'),
    hostile(`"deep":${deep}`),
    hostile(`"deepList":${'['.repeat(60)}${']'.repeat(60)}`),
    hostile('"empty":"","nul":"\\u0000","lone":"\\ud800"'),
  ];
  const upper = base();
  const urn = base();
  for (let round = 0; round < 3; round++) for (const h of burst) nc.publish('scan.requests', h.text);
  nc.publish('scan.requests', JSON.stringify({ ...upper, job_id: upper.job_id.toUpperCase() }));
  nc.publish('scan.requests', JSON.stringify({ ...urn, job_id: `urn:uuid:${urn.job_id}` }));

  // Each hostile request is valid: acked, then refused on reading its (missing) file — so it was stored and worked on.
  // A request that lost the race for a slot waits for the poll (the schedule, driven by hand in tests).
  await until(() => burst.every(({ req }) => envelopes.some((e) => e.job_id === req.job_id)), 20_000);
  expect((await poll()).FunctionError).toBeUndefined();
  for (const { req } of burst) {
    await until(() => envelopes.some((e) => e.job_id === req.job_id && e.status === 'error'), 20_000);
    expect(envelopes.find((e) => e.job_id === req.job_id && e.status === 'error')).toMatchObject({
      error: { code: 'FILE_READ_ERROR' },
    });
    const { Item } = await aws.documents.send(
      new GetCommand({ TableName: cfg.tables.scan, Key: { PK: `JOB#${req.job_id}`, SK: 'META' } }),
    );
    expect(Object.keys(Item!.request).sort()).toEqual([
      'attempt',
      'file_id',
      'job_id',
      'original_name',
      'pipeline',
      'reply_deadline',
      's3',
      'schema_version',
    ]);
  }
  // Three copies of each: ONE job, one answer.
  for (const { req } of burst)
    expect(envelopes.filter((e) => e.job_id === req.job_id && e.status === 'error')).toHaveLength(1);
  // An upper-case id is the same job, answered under the lower-case one; an urn:uuid: id is SCHEMA_MISMATCH.
  await until(
    () =>
      envelopes.some((e) => e.job_id === upper.job_id && e.status === 'error') &&
      envelopes.some((e) => e.job_id === urn.job_id),
    20_000,
  );
  expect(envelopes.filter((e) => e.job_id.toLowerCase() === upper.job_id).every((e) => e.job_id === upper.job_id)).toBe(
    true,
  );
  expect(envelopes.find((e) => e.job_id === urn.job_id)).toMatchObject({
    status: 'error',
    error: { code: 'SCHEMA_MISMATCH' },
  });
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();

  const health = await call('GET', '/healthcheck', undefined, { authorization: undefined });
  expect(health.status).toBe(200);

  // A good scan still completes end to end.
  const key = `inbox/${randomUUID()}/aep_6.pdf`;
  await aws.s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: fs.readFileSync(path.resolve(__dirname, '../../fixtures/ocr/inputs/aep_6.pdf')),
    }),
  );
  const good = base({ s3: { bucket, key }, original_name: 'aep_6.pdf' });
  nc.publish('scan.requests', JSON.stringify(good));
  await until(() => envelopes.some((e) => e.job_id === good.job_id), 15_000);
  for (let i = 0; i < 6 && !envelopes.some((e) => e.job_id === good.job_id && e.status !== 'processing'); i++) {
    expect((await poll()).FunctionError).toBeUndefined();
    await until(() => envelopes.some((e) => e.job_id === good.job_id && e.status !== 'processing'), 3000);
  }
  expect(envelopes.find((e) => e.job_id === good.job_id && e.status !== 'processing')).toMatchObject({
    status: 'done',
  });
}, 120_000);

it('the stack creates the hot folder private (0700)', () => {
  const root = process.env.SCAN_HOTFOLDER_ROOT!;
  expect(fs.statSync(root).mode & 0o777).toBe(0o700);
});

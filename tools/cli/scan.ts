import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { connect } from 'nats';
import { isoTime, systemClock } from '../../lib/clock';
import { loadNatsConfig } from '../../lib/config';
import { natsOptions } from '../../lib/nats/connection';
import type { Envelope } from '../../lib/scan/contract';
import { loadStackEnv } from './stack-env';

/**
 * `npm run scan -- <file> [--timeout 120]`: what the core system does, by hand,
 * against the running `npm start` stack (its endpoints come from .stack/env):
 * upload the file to S3, publish a scan request, print every envelope.
 */

async function main() {
  loadStackEnv();
  const args = process.argv.slice(2);
  const file = args.find((a) => !a.startsWith('--'));
  const timeoutS = Number(args[args.indexOf('--timeout') + 1] ?? 0) || 120;
  if (!file || !fs.existsSync(file)) throw new Error('usage: npm run scan -- <file> [--timeout seconds]');
  const bucket = process.env.BUCKET_FILES;
  if (!bucket || !process.env.NATS_URL)
    throw new Error('no stack found: run `npm start` first (or set BUCKET_FILES and NATS_URL)');

  const job = randomUUID();
  const fileId = randomUUID();
  const key = `inbox/${fileId}/${path.basename(file)}`;
  const s3 = new S3Client({
    region: process.env.AWS_REGION ?? 'us-east-1',
    forcePathStyle: !!process.env.AWS_ENDPOINT_URL_S3,
  });
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: fs.readFileSync(file) }));
  process.stdout.write(`uploaded s3://${bucket}/${key}\n`);

  const nc = await connect(natsOptions(loadNatsConfig(), 'scan-cli'));
  const sub = nc.subscribe(process.env.SCAN_RESULT_SUBJECT || 'scan.results');
  const request = {
    schema_version: '1.0',
    job_id: job,
    file_id: fileId,
    attempt: 1,
    pipeline: 'image',
    s3: { bucket, key },
    original_name: path.basename(file),
    reply_deadline: isoTime(systemClock() + timeoutS * 1000),
  };
  nc.publish(process.env.SCAN_REQUEST_SUBJECT || 'scan.requests', JSON.stringify(request));
  process.stdout.write(`published job ${job}\n`);

  const began = Date.now();
  const progress = setInterval(
    () => process.stdout.write(`\rwaiting for the answer… ${Math.round((Date.now() - began) / 1000)} s `),
    1000,
  );
  const timer = setTimeout(() => sub.unsubscribe(), timeoutS * 1000);
  let final: Envelope | undefined;
  for await (const msg of sub) {
    const e = JSON.parse(new TextDecoder().decode(msg.data)) as Envelope;
    if (e.job_id !== job) continue;
    process.stdout.write(`\r${JSON.stringify(e, null, 2)}\n`);
    if (e.status !== 'processing') {
      final = e;
      break;
    }
  }
  clearInterval(progress);
  clearTimeout(timer);
  await nc.close();
  s3.destroy();
  if (!final) throw new Error(`no answer within ${timeoutS} s`);
  process.exitCode = final.status === 'error' ? 2 : 0;
}

main().catch((err) => {
  process.stderr.write(`\n${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

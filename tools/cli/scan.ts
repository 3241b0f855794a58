import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { connect } from 'nats';
import { isoTime, systemClock } from '../../lib/clock';
import { ConfigError, loadNatsConfig } from '../../lib/config';
import { natsOptions } from '../../lib/nats/connection';
import type { Envelope } from '../../lib/scan/contract';
import { CliArgs, cliSpec, runCli, UsageError } from './run';
import { loadStackEnv } from './stack-env';

/** What the core system does, by hand, against the running `npm start` stack. */
export const SCAN_CLI = cliSpec({
  usage: `usage: npm run scan -- <file> [--timeout <seconds>]

What the core system does, by hand: uploads the file to the files bucket, publishes
a scan request on NATS and prints every envelope of its job until the final one.
Try it with a shipped sample: npm run scan -- fixtures/ocr/inputs/aep_3.pdf

  --timeout <seconds>  how long to wait for the final envelope, 1-3600 (default 120)
  --help               this text

The stack is the environment's: BUCKET_FILES, NATS_URL (and NATS_USER/NATS_PASSWORD),
AWS_ENDPOINT_URL_S3 (read from .stack/env when \`npm start\` runs). Exit 0 a final
envelope came (done or needs_check), 1 none within the timeout, 2 bad usage or settings,
3 an error envelope (NOT_IMPLEMENTED by default: the contract's slice 0, docs/scan.md).`,
  options: { timeout: { type: 'string' } },
  positionals: { min: 1, max: 1 },
});

async function main({ values, positionals: [file] }: CliArgs<typeof SCAN_CLI.options>): Promise<number> {
  const timeoutText = values.timeout ?? '120';
  if (!/^\d{1,4}$/.test(timeoutText) || Number(timeoutText) < 1 || Number(timeoutText) > 3600)
    throw new UsageError('--timeout must be 1..3600 seconds');
  const timeoutS = Number(timeoutText);
  if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) throw new UsageError(`${file} is not a file`);
  loadStackEnv();
  const bucket = process.env.BUCKET_FILES;
  if (!bucket || !process.env.NATS_URL)
    throw new ConfigError(['no stack found: run `npm start` first (or set BUCKET_FILES and NATS_URL)']);

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
  if (!final) {
    process.stderr.write(`\nno answer within ${timeoutS} s\n`);
    return 1;
  }
  return final.status === 'error' ? 3 : 0;
}

if (require.main === module) runCli(SCAN_CLI, main, { expected: [ConfigError] });

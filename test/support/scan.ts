import { PutObjectCommand } from '@aws-sdk/client-s3';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NatsConnection, Subscription } from 'nats';
import { scanOnce } from '../../emulator/scanner/scanner';
import { loadScanConfig } from '../../lib/scan/config';
import { silentLogger } from '../../lib/log';
import { publishWithRetries } from '../../lib/nats/publish';
import type { Envelope } from '../../lib/scan/contract';
import { DynamoDbScanJobStore } from '../../lib/scan/dynamodb-store';
import { S3ScanFiles } from '../../lib/scan/s3-files';
import type { GatewayDeps } from '../../lib/scan/gateway';
import { pollOnce } from '../../lib/scan/gateway';
import { LocalHotFolder } from '../../lib/scan/hotfolder';
import { ContentAiNormalizer } from '../../lib/scan/normalizer';
import { isolatedTable, stackClients, stackConfig, stackNats } from './stack';

/**
 * A scan gateway of its own per test on the run's real stack (DynamoDB Local,
 * s3rver, nats-server) and a real hot folder: its own table (so its own slot
 * counter), hot folder and result subject; the scanner emulator in-process.
 * Call `scanSuite()` once at the top of a test file.
 */
export const FIXTURES = path.resolve(__dirname, '../../fixtures/ocr');
export const aws = stackClients();
export const bucket = stackConfig().buckets.files;
const shared: { nc?: NatsConnection } = {};
const cleanups: Array<() => Promise<void>> = [];

export function scanSuite(): void {
  beforeAll(async () => {
    shared.nc = await stackNats();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  afterAll(async () => {
    await shared.nc?.close();
    aws.dynamodb.destroy();
    aws.s3.destroy();
  });
}

export const nats = (): NatsConnection => shared.nc!;

export interface Harness {
  deps: GatewayDeps;
  root: string;
  envelopes: Envelope[];
  msgIds: string[];
  sub: Subscription;
  clock: { now: number };
  logs: Array<{ level: string; event: string; fields: Record<string, unknown> }>;
}

/** `sharedRoot`: a folder that outlives the test (an SMB share's); it is emptied, not removed. */
export async function harness(
  over: Partial<GatewayDeps> = {},
  env: Record<string, string> = {},
  sharedRoot?: string,
): Promise<Harness> {
  const nc = nats();
  const table = await isolatedTable(aws, 'ScanTable');
  const root = sharedRoot ?? fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-'));
  const empty = () => {
    for (const entry of fs.existsSync(root) ? fs.readdirSync(root) : [])
      fs.rmSync(path.join(root, entry), { recursive: true, force: true });
  };
  if (sharedRoot) empty();
  fs.mkdirSync(path.join(root, 'Input'), { recursive: true });
  const subject = `scan.results.${randomUUID()}`;
  const envelopes: Envelope[] = [];
  const msgIds: string[] = [];
  const sub = nc.subscribe(subject, {
    callback: (_err, msg) => {
      envelopes.push(JSON.parse(new TextDecoder().decode(msg.data)));
      msgIds.push(msg.headers?.get('Nats-Msg-Id') ?? '');
    },
  });
  await nc.flush();
  cleanups.push(async () => {
    sub.unsubscribe();
    if (sharedRoot) empty();
    else fs.rmSync(root, { recursive: true, force: true });
    await table.drop();
  });
  const clock = { now: Date.parse('2026-12-02T12:00:00Z') };
  const config = { ...loadScanConfig({ SCAN_HOTFOLDER_ROOT: root, SCAN_RESULT_SUBJECT: subject, ...env }), bucket };
  const logs: Harness['logs'] = [];
  const record =
    (level: string) =>
    (event: string, fields: Record<string, unknown> = {}) =>
      void logs.push({ level, event, fields });
  const log = {
    debug: record('debug'),
    info: record('info'),
    warn: record('warn'),
    error: record('error'),
    child: () => log,
  };
  const deps: GatewayDeps = {
    jobs: new DynamoDbScanJobStore(aws.documents, table.name),
    files: new S3ScanFiles(aws.s3, bucket),
    hotFolder: new LocalHotFolder(root),
    publish: (s, data, id) => publishWithRetries(nc, s, data, id, config.publishRetries),
    normalizer: new ContentAiNormalizer(0.8),
    config,
    service: { name: 'test', version: '1' },
    now: () => clock.now,
    log: silentLogger,
    ...over,
  };
  if (!over.log) deps.log = log;
  return { deps, root, envelopes, msgIds, sub, clock, logs };
}

export async function upload(name: string, body?: Buffer): Promise<string> {
  const key = `inbox/${randomUUID()}/${name}`;
  await aws.s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: body ?? fs.readFileSync(path.join(FIXTURES, 'inputs', name)),
    }),
  );
  return key;
}

export function request(key: string, name: string, over: Record<string, unknown> = {}) {
  return {
    schema_version: '1.0',
    job_id: randomUUID(),
    file_id: randomUUID(),
    attempt: 1,
    pipeline: 'image',
    s3: { bucket, key },
    original_name: name,
    reply_deadline: '2026-12-02T13:00:00Z',
    ...over,
  };
}

/** Polls as the schedule would, the clock stepping past the settle window. */
export async function runToEnd(h: Harness, maxPolls = 6) {
  for (let i = 0; i < maxPolls; i++) {
    await scanOnce({ root: h.root, fixturesDir: FIXTURES });
    await pollOnce(h.deps);
    h.clock.now += 2500;
  }
  await settleNats();
}

export async function settleNats() {
  await nats().flush();
  await new Promise((r) => setTimeout(r, 50));
}

export const finals = (h: Harness) => h.envelopes.filter((e) => e.status !== 'processing');

import { S3Client } from '@aws-sdk/client-s3';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { freePort } from '../../tools/stack/ports';
import { startS3Emulator } from '../../tools/stack/services';
import { DeleteCommand } from '@aws-sdk/lib-dynamodb';
import { healthcheck } from '../../functions/health/healthcheck';
import { DynamoDiskRecordStore } from '../../lib/downloads/dynamodb-disk';
import { DISK_RECORD_KEY } from '../../lib/downloads/keys';
import { dynamodbProbe, natsProbe, s3Probe } from '../../lib/health/check';
import { closeNatsConnection, natsConnection } from '../../lib/nats/connection';
import { stackClients, stackConfig } from '../support/stack';
import { bootstrapResources } from '../../tools/stack/stack';

/** The healthcheck core with real probes, while a dependency really dies. */
describe('healthcheck with a failing dependency', () => {
  const cfg = stackConfig();
  const aws = stackClients();
  const deps = (s3: S3Client, timeoutMs = 2000) => ({
    probes: {
      dynamodb: dynamodbProbe(aws.dynamodb, cfg.tables.downloads),
      s3: s3Probe(s3, cfg.buckets.files),
      nats: natsProbe(() => natsConnection(cfg.nats)),
    },
    timeoutMs,
    version: 'test',
    startedAt: 0,
    now: () => 5000,
  });
  afterAll(async () => {
    await closeNatsConnection();
    aws.dynamodb.destroy();
    aws.s3.destroy();
  });

  it('shows s3 down once its emulator is stopped, the rest ok, and still answers', async () => {
    const logDir = path.join(process.env.TEST_STATE_DIR!, 'own-s3');
    fs.mkdirSync(logDir, { recursive: true });
    const port = await freePort();
    const own = await startS3Emulator({ root: '.', logDir, say: () => undefined }, port, logDir);
    const endpoint = `http://127.0.0.1:${port}`;
    const s3 = new S3Client({ region: cfg.region, endpoint, forcePathStyle: true, maxAttempts: 1 });
    try {
      await bootstrapResources(
        {
          resources: { Resources: { B: { Type: 'AWS::S3::Bucket', Properties: { BucketName: cfg.buckets.files } } } },
        } as never,
        { ...(process.env as Record<string, string>), AWS_ENDPOINT_URL_S3: endpoint },
      );
      expect(await healthcheck(deps(s3))).toEqual({
        status: 'ok',
        version: 'test',
        uptime_s: 5,
        checks: { dynamodb: 'ok', s3: 'ok', nats: 'ok' },
      });

      await own.stop();
      const report = await healthcheck(deps(s3));
      expect(report.status).toBe('degraded');
      expect(report.checks).toEqual({ dynamodb: 'ok', s3: 'down', nats: 'ok' });
    } finally {
      await own.stop();
      s3.destroy();
    }
  });

  it('bounds a probe of an endpoint that accepts and never answers', async () => {
    const sockets: net.Socket[] = [];
    const blackhole = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
    const { port } = blackhole.address() as net.AddressInfo;
    const s3 = new S3Client({
      region: cfg.region,
      endpoint: `http://127.0.0.1:${port}`,
      forcePathStyle: true,
      maxAttempts: 1,
    });
    try {
      const began = Date.now();
      const report = await healthcheck(deps(s3, 300));
      expect(report.checks.s3).toBe('down');
      expect(Date.now() - began).toBeLessThan(2000);
    } finally {
      s3.destroy();
      sockets.forEach((s) => s.destroy());
      blackhole.close();
    }
  });

  it("reports the disk as the downloads poll last saw it: down with the operator's words while a download is held", async () => {
    const records = new DynamoDiskRecordStore({ documents: aws.documents, table: cfg.tables.downloads });
    const s3 = aws.s3;
    const GiB = 1024 ** 3;
    const at = new Date(2000).toISOString();
    const withDisk = { ...deps(s3), disk: () => records.read() };
    try {
      await records.record({ free_bytes: 80 * GiB, reserve_bytes: 5 * GiB, needed_bytes: GiB, held: 0, at });
      const ok = await healthcheck(withDisk);
      expect(ok).toMatchObject({ status: 'ok', checks: { disk: 'ok' } });
      expect(ok.disk_space).toEqual({
        free_bytes: 80 * GiB,
        reserve_bytes: 5 * GiB,
        needed_bytes: GiB,
        held: 0,
        recorded_s_ago: 3,
      });
      expect(ok.details).toBeUndefined();

      await records.record({ free_bytes: 2 * GiB, reserve_bytes: 5 * GiB, needed_bytes: 9 * GiB, held: 1, at });
      const low = await healthcheck(withDisk);
      expect(low).toMatchObject({ status: 'degraded', checks: { disk: 'down', dynamodb: 'ok' } });
      expect(low.details).toEqual({ disk: '2\u00a0GiB free, 5\u00a0GiB reserved, 9\u00a0GiB still to write, 1 held' });

      // A record that cannot be read (a hung table) leaves `disk` out; the probes still answer in their bound.
      const hung = await healthcheck({ ...deps(s3, 300), disk: () => new Promise(() => undefined) });
      expect(hung.checks).not.toHaveProperty('disk');
      expect(hung).not.toHaveProperty('disk_space');
    } finally {
      await aws.documents.send(new DeleteCommand({ TableName: cfg.tables.downloads, Key: DISK_RECORD_KEY }));
    }
  });
});

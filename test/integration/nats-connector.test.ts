import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { NatsConnection } from 'nats';
import type { Envelope } from '../../lib/scan/contract';
import { freePort } from '../../tools/stack/ports';
import { RunningService } from '../../tools/stack/process';
import { startNatsConnector, startNatsServer } from '../../tools/stack/services';
import { Connector, loadConnectorSettings, startConnector } from '../../connector/connector';
import { silentLogger } from '../../lib/log';
const ROOT = path.resolve(__dirname, '..', '..');
import { invokeScheduled, stackConfig, stackNats } from '../support/stack';

/**
 * The cloud NATS connector as its own process (connector/), against
 * nats-server and serverless offline. The run's stack already bridges with one
 * connector (globalSetup); these tests add a second one in the same queue
 * groups, so the server splits each burst between the two, and then stop or
 * kill that second one mid-burst.
 */
describe('NATS connector process', () => {
  const bucket = stackConfig().buckets.files;
  const ctx = { root: ROOT, logDir: path.join(process.env.TEST_STATE_DIR!, 'logs'), say: () => undefined };
  let nc: NatsConnection;
  const envelopes = new Map<string, Envelope[]>();
  const extra: RunningService[] = [];

  beforeAll(async () => {
    nc = await stackNats('connector-test');
    nc.subscribe('scan.results', {
      callback: (_e, m) => {
        const env = JSON.parse(new TextDecoder().decode(m.data)) as Envelope;
        envelopes.set(env.job_id, [...(envelopes.get(env.job_id) ?? []), env]);
      },
    });
    await nc.flush();
  });
  afterAll(async () => {
    for (const s of extra) await s.stop();
    await nc.close();
  });

  const until = async (cond: () => boolean, ms: number) => {
    for (const end = Date.now() + ms; !cond() && Date.now() < end;) await sleep(100);
    return cond();
  };
  const health = async (url: string) =>
    (await fetch(url)).json() as Promise<{ status: string; invoked: number; routes: unknown[] }>;
  const connector = async (name: string, env: Record<string, string> = {}) => {
    const s = await startNatsConnector(ctx, {
      name,
      definitionFile: process.env.NATS_CONNECTOR_DEFINITION!,
      healthPort: await freePort(),
      env: { ...process.env, ...env },
    });
    extra.push(s);
    return s;
  };
  // A request for an object that does not exist: acked `processing`, then answered FILE_READ_ERROR, holding no slot.
  const request = (job: string, attempt: number) =>
    JSON.stringify({
      schema_version: '1.0',
      job_id: job,
      file_id: randomUUID(),
      attempt,
      pipeline: 'image',
      s3: { bucket, key: `inbox/${job}/missing.pdf` },
      original_name: 'missing.pdf',
      reply_deadline: new Date(Date.now() + 600_000).toISOString(),
    });
  const acked = (job: string) => (envelopes.get(job) ?? []).some((e) => e.status === 'processing');
  const final = (job: string) => (envelopes.get(job) ?? []).find((e) => e.status !== 'processing');
  const drivePoll = async (jobs: string[]) => {
    for (let i = 0; i < 20 && !jobs.every(final); i++) {
      await invokeScheduled('scanPoll');
      await until(() => jobs.every(final), 2000);
    }
  };

  it('the stack bridges through its connector process: health lists the routes, a NATS request reaches the function', async () => {
    const url = process.env.NATS_CONNECTOR_HEALTH!;
    expect(url).toBeTruthy();
    const before = await health(url);
    expect(before).toMatchObject({ status: 'ok' });
    expect(before.routes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          subject: 'scan.requests',
          queue: 'scan-gateway',
          function: 'torrent-scan-sync-test-scanRequest',
        }),
      ]),
    );
    const reply = await nc.request('health.ping', 'hi', { timeout: 5000 });
    expect(reply.data.length).toBeGreaterThan(0);
    // The count moves when the Invoke call returns, which may be after the function already replied.
    let after = before.invoked;
    for (const end = Date.now() + 10_000; after <= before.invoked && Date.now() < end; await sleep(100))
      after = (await health(url)).invoked;
    expect(after).toBeGreaterThan(before.invoked);
  });

  it('SIGTERM mid-burst drains: every request of the burst is acknowledged, none is lost', async () => {
    const second = await connector('nats-connector-drain', { CONNECTOR_MAX_INFLIGHT: '1' });
    const jobs = Array.from({ length: 60 }, () => randomUUID());
    for (const [i, job] of jobs.entries()) {
      nc.publish('scan.requests', request(job, 1));
      if (i === 30) await nc.flush().then(() => second.stop()); // SIGTERM to the process, waits for its exit
    }
    await nc.flush();
    expect(await until(() => jobs.every(acked), 90_000)).toBe(true);
    await drivePoll(jobs);
    expect(jobs.map((j) => final(j)?.error?.code)).toEqual(jobs.map(() => 'FILE_READ_ERROR'));
  }, 240_000);

  it('SIGKILL mid-burst loses at most what core NATS loses; the core system re-send and a restarted connector complete every job', async () => {
    const victim = await connector('nats-connector-kill', { CONNECTOR_MAX_INFLIGHT: '1' });
    const jobs = Array.from({ length: 80 }, () => randomUUID());
    for (const [i, job] of jobs.entries()) {
      nc.publish('scan.requests', request(job, 1));
      if (i === 40) {
        await nc.flush();
        process.kill(-victim.pid, 'SIGKILL'); // no drain: whatever it held is gone
      }
    }
    await nc.flush();
    await until(() => jobs.every(acked), 10_000);
    const lost = jobs.filter((j) => !acked(j));
    process.stdout.write(`[connector-test] SIGKILL mid-burst: ${lost.length} of ${jobs.length} requests lost\n`);

    // The core system re-sends what got no ack within 30 s (here: at once), with the next attempt; a restarted connector shares the load.
    await connector('nats-connector-restarted');
    for (const job of lost) nc.publish('scan.requests', request(job, 2));
    await nc.flush();
    expect(await until(() => jobs.every(acked), 90_000)).toBe(true);
    await drivePoll(jobs);
    expect(jobs.filter((j) => final(j)?.error?.code !== 'FILE_READ_ERROR')).toEqual([]);
    // A job is answered once per attempt that reached it, never twice for one attempt.
    for (const job of jobs) {
      const acks = (envelopes.get(job) ?? []).filter((e) => e.status === 'processing').map((e) => e.attempt);
      expect(new Set(acks).size).toBe(acks.length);
    }
  }, 240_000);
});

/** Reconnection and the health endpoint, against a nats-server of its own that the test stops and starts again. */
describe('NATS connector health across a NATS outage', () => {
  const logDir = path.join(process.env.TEST_STATE_DIR!, 'logs');
  const ctx = { root: path.resolve(__dirname, '..', '..'), logDir, say: () => undefined };
  let server: RunningService | undefined;
  let connector: Connector | undefined;
  afterAll(async () => {
    await connector?.stop();
    await server?.stop();
  });

  it('answers 503 while NATS is down and 200 again once the client reconnected by itself', async () => {
    const port = await freePort();
    server = await startNatsServer(ctx, port);
    const definition = path.join(process.env.TEST_STATE_DIR!, `outage-${Date.now()}.json`);
    fs.writeFileSync(
      definition,
      JSON.stringify({
        functions: { ping: { name: 'svc-test-ping', events: [{ nats: { subject: 'outage.ping' } }] } },
      }),
    );
    const env = { NATS_URL: `nats://127.0.0.1:${port}`, SERVICE_DEFINITION: definition, HEALTH_PORT: '0' };
    connector = await startConnector(loadConnectorSettings(env), env, silentLogger);
    const status = async () => (await fetch(connector!.healthUrl)).status;
    expect(await status()).toBe(200);

    await server.stop();
    const down = Date.now() + 10_000;
    while ((await status()) !== 503 && Date.now() < down) await sleep(100);
    expect(await status()).toBe(503);

    server = await startNatsServer(ctx, port);
    const up = Date.now() + 15_000;
    while ((await status()) !== 200 && Date.now() < up) await sleep(100);
    expect(await status()).toBe(200);
    expect(await connector.stop()).toBe(true);
    // Closed, or a kept-alive socket still answering: never 200 once draining.
    expect(['closed', 503]).toContain(await status().catch(() => 'closed'));
    connector = undefined;
  }, 60_000);
});

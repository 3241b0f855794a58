import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, NatsConnection, usernamePasswordAuthenticator } from 'nats';
import { loadScanConfig } from '../../../lib/scan/config';
import { silentLogger } from '../../../lib/log';
import { publishWithRetries } from '../../../lib/nats/publish';
import { PublishFailedError, PublishRefusedError } from '../../../lib/nats/errors';
import type { Envelope } from '../../../lib/scan/contract';
import { GatewayDeps, handleRequest, pollOnce } from '../../../lib/scan/gateway';
import type { HotFolder } from '../../../lib/scan/hotfolder';
import { ContentAiNormalizer } from '../../../lib/scan/normalizer';
import { freePort, tcpOpen } from '../../../tools/stack/ports';
import { RunningService, startProcess } from '../../../tools/stack/process';
import { ensureSystemDep } from '../../../tools/stack/system-deps';
import { MemoryScanJobStore } from '../../unit/scan/memory-store';
import { inputOf } from '../../../lib/scan/input';

/**
 * The publish retry loop (PUBLISH_RETRIES) against a real nats-server of this test's own that refuses publishes
 * for a while: a publish permission toggled by a config reload, and the server killed and started again.
 */
const SUBJECT = 'scan.results.retry';
let dir: string;
let port: number;
let server: RunningService | undefined;
const password = randomBytes(12).toString('base64url');

/** The server's config: the gateway's user may publish on SUBJECT or not. */
function writeConfig(publishAllowed: boolean) {
  const permissions = publishAllowed ? '' : `, permissions: { publish: { deny: ["${SUBJECT}"] } }`;
  fs.writeFileSync(
    path.join(dir, 'nats.conf'),
    `authorization {\n  users = [ { user: "gw", password: "${password}"${permissions} } ]\n}\n`,
  );
}

async function startServer() {
  server = await startProcess({
    name: 'nats-server',
    command: ensureSystemDep('nats', () => undefined),
    args: ['-c', path.join(dir, 'nats.conf'), '-a', '127.0.0.1', '-p', String(port)],
    logFile: path.join(dir, 'nats.log'),
    url: `nats://127.0.0.1:${port}`,
    ready: () => tcpOpen(port),
  });
}

/** Applies the config file to the running server (SIGHUP = reload) and waits until it says so. */
async function reload() {
  const log = () => fs.readFileSync(path.join(dir, 'nats.log'), 'utf8');
  const reloads = (log().match(/Reloaded server configuration/g) ?? []).length;
  process.kill(server!.pid, 'SIGHUP');
  for (const end = Date.now() + 5000; Date.now() < end; await new Promise((r) => setTimeout(r, 20)))
    if ((log().match(/Reloaded server configuration/g) ?? []).length > reloads) return;
  throw new Error('nats-server did not reload its configuration');
}

let nc: NatsConnection;
const received: string[] = [];
beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-retries-'));
  port = await freePort();
  writeConfig(true);
  await startServer();
  nc = await connect({
    servers: `nats://127.0.0.1:${port}`,
    authenticator: usernamePasswordAuthenticator('gw', password),
    reconnectTimeWait: 100,
    maxReconnectAttempts: -1,
  });
  nc.subscribe(SUBJECT, { callback: (_e, m) => void received.push(m.headers?.get('Nats-Msg-Id') ?? '') });
  await nc.flush();
}, 30_000);
afterAll(async () => {
  await nc?.close();
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => void received.splice(0));

/** A flush that waits out a reconnect (a flush pending while the client redials is rejected with DISCONNECT). */
async function flushed() {
  for (const end = Date.now() + 5000; ; await new Promise((r) => setTimeout(r, 50))) {
    try {
      return await nc.flush();
    } catch (err) {
      if (Date.now() > end) throw err;
    }
  }
}

const delivered = async (id: string) => {
  await flushed();
  await new Promise((r) => setTimeout(r, 50));
  return received.filter((r) => r === id).length;
};

describe('publishWithRetries: the server refuses publishes (permission toggled by a config reload)', () => {
  afterEach(async () => {
    writeConfig(true);
    await reload();
  });

  it('every try refused: it throws after PUBLISH_RETRIES more tries, and nothing was delivered', async () => {
    writeConfig(false);
    await reload();
    const began = Date.now();
    const failed = await publishWithRetries(nc, SUBJECT, '{}', 'refused', 3, { backoffMs: 50 }).catch((e) => e);
    expect(failed).toBeInstanceOf(PublishFailedError);
    expect(failed).toMatchObject({ tries: 4, message: expect.stringContaining('after 4 tries') });
    expect(failed.cause).toBeInstanceOf(PublishRefusedError);
    expect(Date.now() - began).toBeGreaterThanOrEqual(50 + 100 + 200); // three pauses: four tries
    expect(await delivered('refused')).toBe(0);
  });

  it('refused for a while, then allowed: a retry delivers it', async () => {
    writeConfig(false);
    await reload();
    const publishing = publishWithRetries(nc, SUBJECT, '{}', 'later', 3, { backoffMs: 400 }); // tries at 0, 0.4, 1.2, 2.8 s
    await new Promise((r) => setTimeout(r, 600));
    expect(await delivered('later')).toBe(0);
    writeConfig(true);
    await reload();
    await publishing;
    expect(await delivered('later')).toBe(1);
  });
});

describe('publishWithRetries: the server is killed and started again', () => {
  it('down for a moment: a later try delivers it on the new connection', async () => {
    await server!.stop();
    const publishing = publishWithRetries(nc, SUBJECT, '{}', 'restart', 3, { backoffMs: 300 }); // 0, 0.3, 0.9, 2.1 s
    await new Promise((r) => setTimeout(r, 400));
    await startServer();
    await publishing;
    expect(await delivered('restart')).toBe(1);
  }, 20_000);

  it('down longer than the retries: it throws (the caller keeps the result to publish again)', async () => {
    await server!.stop();
    try {
      await expect(publishWithRetries(nc, SUBJECT, '{}', 'gone', 2, { backoffMs: 50 })).rejects.toMatchObject({
        name: 'PublishFailedError',
        tries: 3,
      });
    } finally {
      await startServer();
    }
    expect(await delivered('gone')).toBe(0);
  }, 20_000);
});

describe('the gateway: a result whose publish failed every try is published again, same Nats-Msg-Id', () => {
  it('stored, not marked published; a later pass re-publishes it once NATS takes it', async () => {
    const clock = { now: Date.parse('2026-12-02T12:00:00Z') };
    const answers = new Map<string, string>();
    const hotFolder: HotFolder = {
      put: async () => undefined,
      poll: async (job) => {
        const body = answers.get(job);
        return body === undefined ? null : [{ name: 'a.json', size: body.length, read: async () => Buffer.from(body) }];
      },
      healthy: async () => true,
    };
    const jobs = new MemoryScanJobStore();
    const config = {
      ...loadScanConfig({ SCAN_HOTFOLDER_ROOT: '/hot', SCAN_RESULT_SUBJECT: SUBJECT }),
      bucket: 'files',
    };
    const deps: GatewayDeps = {
      jobs,
      files: {
        read: async () => Buffer.from('%PDF'),
        open: async () => inputOf(Buffer.from('%PDF')),
        writeRaw: async () => undefined,
      },
      hotFolder,
      publish: (s, data, id) => publishWithRetries(nc, s, data, id, config.publishRetries, { backoffMs: 20 }),
      normalizer: new ContentAiNormalizer(0.8),
      config,
      service: { name: 't', version: '1' },
      now: () => clock.now,
      log: silentLogger,
    };
    const job = randomUUID();
    await handleRequest(
      deps,
      JSON.stringify({
        schema_version: '1.0',
        job_id: job,
        file_id: randomUUID(),
        attempt: 1,
        pipeline: 'image',
        s3: { bucket: 'files', key: 'in/a.pdf' },
        original_name: 'a.pdf',
        reply_deadline: '2026-12-02T13:00:00Z',
      }),
    );
    answers.set(job, JSON.stringify({ error: { code: '', message: '' }, data_ocr: { confidence: 0.9, fields: [] } }));
    await pollOnce(deps);
    clock.now += 2000;
    writeConfig(false);
    await reload();
    try {
      expect(await pollOnce(deps)).toMatchObject({ finished: 1 }); // settled and stored; every publish try refused
      expect(await jobs.get(job)).toMatchObject({ state: 'finished', published: false });
    } finally {
      writeConfig(true);
      await reload();
    }
    const msgId = `${job}:1:done`;
    expect(await delivered(msgId)).toBe(0);
    clock.now += 31_000; // the publish lease of the pass that stored it has run out
    expect(await pollOnce(deps)).toMatchObject({ republished: 1 });
    expect(await delivered(msgId)).toBe(1);
    expect(await jobs.get(job)).toMatchObject({ published: true });
    const envelope = JSON.parse(JSON.stringify((await jobs.get(job))!.result)) as Envelope;
    expect(envelope.status).toBe('done');
  });
});

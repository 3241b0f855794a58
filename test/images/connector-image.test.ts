import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { NatsConnection } from 'nats';
import { MANIFEST, type ImagesManifest } from '../../tools/images/build';
import { podman, podmanGlobalArgs, ulimitArgs } from '../../tools/images/podman';
import { freePort } from '../../tools/stack/ports';
import { stackNats } from '../support/stack';

/**
 * The NATS connector's image as built here (npm run images:build; issue 55 part 3), run with podman as its ECS task
 * runs it (its CMD, as the account `node`, a read-only root): it connects to the run's nats-server, says so on its
 * health port, bridges a message on a `nats` event's subject into an asynchronous Invoke of that function (a
 * recording stand-in for the Lambda API: the image's service definition names the packaged stage's functions), and
 * on SIGTERM drains and exits 0. The run's stack has its own connector in the same queue groups, so a burst is
 * split between the two: the test sends twenty and expects some here, each one exactly as published.
 */

const manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as ImagesManifest;
const image = manifest.connector!;
const state = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../.serverless/serverless-state.json'), 'utf8'));
const pingFunction = (state.service.functions.natsPing as { name: string }).name;

let nc: NatsConnection;
let work: string;
const invokes: Array<{ name: string; type?: string; payload: { subject?: string; data?: string } }> = [];
let lambdaApi: http.Server;
let lambdaUrl: string;

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'tss-connector-image-'));
  nc = await stackNats('connector-image-test');
  lambdaApi = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const m = /^\/2015-03-31\/functions\/([^/]+)\/invocations/.exec(req.url ?? '');
      if (req.method !== 'POST' || !m) return void res.writeHead(404).end();
      invokes.push({
        name: decodeURIComponent(m[1]),
        type: req.headers['x-amz-invocation-type'] as string | undefined,
        payload: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'),
      });
      res.writeHead(202, { 'content-type': 'application/json' }).end();
    });
  });
  await new Promise<void>((resolve) => lambdaApi.listen(0, '127.0.0.1', resolve));
  lambdaUrl = `http://127.0.0.1:${(lambdaApi.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await nc?.close();
  lambdaApi?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

const health = async (port: number): Promise<{ code: number; body: { status?: string } }> => {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    return { code: res.status, body: (await res.json()) as { status?: string } };
  } catch {
    return { code: 0, body: {} };
  }
};

async function until<T>(probe: () => Promise<T> | T, ok: (v: T) => boolean, ms: number): Promise<T> {
  let v = await probe();
  for (const end = Date.now() + ms; !ok(v) && Date.now() < end; v = await probe())
    await new Promise((r) => setTimeout(r, 200));
  return v;
}

describe('the NATS connector image', () => {
  it('connects, bridges a message to its function, and drains on SIGTERM', async () => {
    const port = await freePort();
    const env = {
      // The run's NATS and its login, as the functions have them (the task gets them from the nats secret).
      ...Object.fromEntries(
        Object.entries(process.env).filter(
          (e): e is [string, string] => /^NATS_(URL|USER|PASSWORD|NKEY_SEED|JWT)$/.test(e[0]) && !!e[1],
        ),
      ),
      HEALTH_PORT: String(port),
      CONNECTOR_DRAIN_MS: '5000',
      AWS_REGION: process.env.AWS_REGION!,
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID!,
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY!,
      AWS_ENDPOINT_URL_LAMBDA: lambdaUrl,
    };
    const envFile = path.join(work, 'env');
    fs.writeFileSync(
      envFile,
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(''),
      { mode: 0o600 },
    );
    const name = `tss-connector-test-${randomUUID().slice(0, 8)}`;
    const began = Date.now();
    let output = '';
    const child: ChildProcess = spawn(
      'podman',
      [
        ...podmanGlobalArgs(),
        'run',
        '--rm',
        '--name',
        name,
        '--network=host',
        '--read-only',
        ...ulimitArgs(),
        '--env-file',
        envFile,
        image.id,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const up = await until(
        () => health(port),
        (h) => h.code === 200,
        60_000,
      );
      expect(up).toMatchObject({ code: 200 });
      const upMs = Date.now() - began;
      // The image runs as the account `node`, as its Dockerfile says.
      const user = await podman(['exec', name, 'id', '-un']);
      expect(user.stdout.trim()).toBe('node');

      const marks = Array.from({ length: 20 }, () => randomUUID());
      for (const m of marks) nc.publish('health.ping', JSON.stringify({ mark: m }));
      await nc.flush();
      const ours = () => invokes.filter((i) => i.name === pingFunction);
      await until(
        () => ours().length,
        (n) => n > 0,
        10_000,
      );
      // Give the rest of the burst a moment, then every invoke here is one published message, once, asynchronously.
      await new Promise((r) => setTimeout(r, 500));
      expect(ours().length).toBeGreaterThan(0);
      expect(invokes.every((i) => i.name === pingFunction && i.type === 'Event')).toBe(true);
      const got = ours().map((i) => JSON.stringify(i.payload));
      const seen = marks.filter((m) => got.some((g) => g.includes(m)));
      expect(seen).toHaveLength(ours().length);

      await podman(['kill', '--signal', 'TERM', name]);
      const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 30_000))]);
      expect(code).toBe(0);
      expect(output).toContain('connector_signal');
      process.stdout.write(
        `[connector-image] ${image.tag} ${image.id.slice(0, 19)}… ${(image.bytes / 1e6).toFixed(0)} MB; ` +
          `healthy ${upMs} ms after podman run; bridged ${ours().length} of 20 (the stack's connector took the rest)\n`,
      );
    } finally {
      await podman(['rm', '-f', '-t', '0', name], { allowFail: true });
    }
  }, 120_000);
});

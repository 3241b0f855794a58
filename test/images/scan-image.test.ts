import { GetObjectCommand } from '@aws-sdk/client-s3';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Msg } from 'nats';
import { scanOnce } from '../../emulator/scanner/scanner';
import { natsEventFromMsg } from '../../lib/nats/event';
import type { Envelope } from '../../lib/scan/contract';
import { DynamoDbScanJobStore } from '../../lib/scan/dynamodb-store';
import { MANIFEST, type ImagesManifest } from '../../tools/images/build';
import { podman, podmanGlobalArgs, ulimitArgs } from '../../tools/images/podman';
import { type Outcome, type RuntimeApi, startRuntimeApi } from '../support/runtime-api';
import { Share, startSamba } from '../support/samba';
import { aws, bucket, FIXTURES, nats, request, scanSuite, upload } from '../support/scan';
import { isolatedTable, stackDefinition } from '../support/stack';

/**
 * The scan functions' image as built here (npm run images:build; issue 55 part 3, docs/deploy.md "Building and
 * running the images here"), run with podman as Lambda runs a function image: one container per cold start, its
 * entry point and the handler as its command (ImageConfig.Command), its own runtime interface client asking a
 * Runtime API (the stand-in, test/support/runtime-api.ts) for the event and posting the answer back; a read-only
 * root with a writable /tmp, as Lambda's sandbox account (uid 993, no name in the image), the function's
 * environment and Lambda's variables, nothing else. Against a real Samba share (on 445: the scanning system's
 * stand-in that holds an answer open speaks only to that port), the run's DynamoDB, S3 and NATS, and a recording
 * Lambda API for the poller's start.
 */
scanSuite();

const manifest = JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as ImagesManifest;
const image = manifest.scan!;
/** Lambda's sandbox account: a uid the image's password database does not name. */
const LAMBDA_USER = '993:990';

let work: string;
let share: Share;
let table: { name: string; drop: () => Promise<void> };
let lambdaApi: { url: string; invokes: Array<{ name: string; type?: string; payload: unknown }>; close: () => void };
const timings: string[] = [];

async function startLambdaApi(): Promise<typeof lambdaApi> {
  const invokes: typeof lambdaApi.invokes = [];
  const server = http.createServer((req, res) => {
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, invokes, close: () => server.close() };
}

/** The function's variables on the stack, the hot folder on the share, and Lambda's own (not _HANDLER: the image's). */
function functionEnvironment(key: string, over: Record<string, string> = {}): Record<string, string> {
  const definition = stackDefinition();
  const fn = definition.functions[key] as { name: string; environment?: Record<string, string> };
  const e = process.env;
  return {
    ...definition.provider.environment,
    ...(fn.environment ?? {}),
    TABLE_SCAN: table.name,
    SCAN_HOTFOLDER_ROOT: '',
    SCAN_SMB_SHARE: `//${share.host}/${share.share}`,
    SCAN_SMB_PORT: String(share.port),
    SCAN_SMB_USER: share.user,
    SCAN_SMB_PASSWORD: share.password,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
    AWS_LAMBDA_LOG_STREAM_NAME: `${new Date().toISOString().slice(0, 10)}/[$LATEST]${randomUUID().replace(/-/g, '')}`,
    AWS_EXECUTION_ENV: 'AWS_Lambda_Image',
    AWS_REGION: e.AWS_REGION!,
    AWS_DEFAULT_REGION: e.AWS_REGION!,
    AWS_ACCESS_KEY_ID: e.AWS_ACCESS_KEY_ID!,
    AWS_SECRET_ACCESS_KEY: e.AWS_SECRET_ACCESS_KEY!,
    AWS_ENDPOINT_URL_DYNAMODB: e.AWS_ENDPOINT_URL_DYNAMODB!,
    AWS_ENDPOINT_URL_S3: e.AWS_ENDPOINT_URL_S3!,
    AWS_ENDPOINT_URL_LAMBDA: lambdaApi.url,
    TZ: ':UTC',
    ...over,
  };
}

interface Invocation extends Outcome {
  /** The container's output (the function's log), JSON lines parsed. */
  log: Array<Record<string, unknown>>;
  /** Container start to the answer: a cold start and the call. */
  coldMs: number;
}

/** One cold start of the image: a new container, its command the handler, one event through the Runtime API. */
function startInvocation(
  key: string,
  handler: string,
  event: unknown,
  env: Record<string, string>,
): { output: () => string; done: Promise<Invocation>; runtime: Promise<RuntimeApi> } {
  let output = '';
  const runtime = startRuntimeApi();
  const done = (async () => {
    const api = await runtime;
    const envFile = path.join(work, `env-${randomUUID()}`);
    // Through a file, never the command line (the share's password is among them).
    const all = { ...env, AWS_LAMBDA_RUNTIME_API: api.address };
    fs.writeFileSync(
      envFile,
      Object.entries(all)
        .map(([k, v]) => `${k}=${v}\n`)
        .join(''),
      { mode: 0o600 },
    );
    const name = `tss-image-test-${randomUUID().slice(0, 8)}`;
    const began = Date.now();
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
        '--tmpfs',
        '/tmp:rw,mode=1777,size=512m',
        '--user',
        LAMBDA_USER,
        ...ulimitArgs(),
        '--env-file',
        envFile,
        image.id,
        handler,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const outcome = await Promise.race([
        api.invoke(event, { timeoutMs: 90_000 }),
        exited.then((code) => {
          throw new Error(`the container exited ${code} before answering:\n${output}`);
        }),
      ]);
      const coldMs = Date.now() - began;
      timings.push(`${key}: ${coldMs} ms from podman run to the answer (${outcome.ms} ms from the event to it)`);
      // Lambda freezes the container after the answer; the test stops it (its client waits for the next event).
      await podman(['rm', '-f', '-t', '2', name], { allowFail: true });
      await exited;
      const log = output
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          try {
            return JSON.parse(line) as Record<string, unknown>;
          } catch {
            return { text: line };
          }
        });
      return { ...outcome, log, coldMs };
    } finally {
      await podman(['rm', '-f', '-t', '0', name], { allowFail: true });
      await api.close();
      fs.rmSync(envFile, { force: true });
    }
  })();
  return { output: () => output, done, runtime };
}

async function invoke(key: string, handler: string, event: unknown, env: Record<string, string>): Promise<Invocation> {
  const run = startInvocation(key, handler, event, env);
  const outcome = await run.done;
  const api = await run.runtime;
  expect(api.refused).toEqual([]);
  expect(api.initErrors).toEqual([]);
  return outcome;
}

async function until(cond: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; !cond() && Date.now() < end;) await new Promise((r) => setTimeout(r, 200));
  return cond();
}

async function natsEvent(data: string): Promise<unknown> {
  const subject = `scan.requests.image.${randomUUID()}`;
  const got = new Promise<Msg>((resolve) =>
    nats().subscribe(subject, { max: 1, callback: (_err, msg) => resolve(msg) }),
  );
  await nats().flush();
  nats().publish(subject, data);
  return natsEventFromMsg(await got);
}

/** Holds a share's file open with no sharing, as a scanning system still busy with it would (test/support/smb-hold.py). */
async function hold(remote: string): Promise<{ release: () => Promise<void> }> {
  const child = spawn(
    '/usr/bin/python3',
    [
      path.join(__dirname, '../support/smb-hold.py'),
      share.host,
      String(share.port),
      share.share,
      share.user,
      share.password,
      remote,
      'exclusive',
      path.join(work, 'samba', 'smb.conf'),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => String(d).includes('held') && resolve());
    child.on('exit', (code) => reject(new Error(`smb-hold exited ${code}`)));
  });
  const exited = new Promise((r) => child.on('exit', r));
  // Idempotent: the test releases it mid-invocation, and its `finally` again in case it never got there.
  return {
    release: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'tss-image-test-'));
  fs.chmodSync(work, 0o755);
  const [samba, isolated, api] = await Promise.allSettled([
    (async () => {
      const dir = path.join(work, 'samba');
      fs.mkdirSync(dir);
      return startSamba(dir, 445);
    })(),
    isolatedTable(aws, 'ScanTable'),
    startLambdaApi(),
  ]);
  const value = <T>(r: PromiseSettledResult<T>) => (r.status === 'fulfilled' ? r.value : undefined);
  [share, table, lambdaApi] = [value(samba)!, value(isolated)!, value(api)!];
  for (const r of [samba, isolated, api]) if (r.status === 'rejected') throw r.reason;
}, 120_000);

afterAll(async () => {
  process.stdout.write(
    `[scan-image] ${image.tag} ${image.id.slice(0, 19)}… ${(image.bytes / 1e6).toFixed(0)} MB (${manifest.architecture})\n` +
      timings.map((t) => `[scan-image]   ${t}\n`).join(''),
  );
  lambdaApi?.close();
  await table?.drop();
  await share?.service.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('the scan image, run as Lambda runs it, on a real Samba share', () => {
  it("a request lands in the share's Input/; the poller it starts reads the answer set under the exclusive open and publishes the envelope", async () => {
    const subject = `scan.results.image.${randomUUID()}`;
    const envelopes: Envelope[] = [];
    const sub = nats().subscribe(subject, {
      callback: (_err, msg) => envelopes.push(JSON.parse(new TextDecoder().decode(msg.data))),
    });
    await nats().flush();
    try {
      const req = request(await upload('aep_6.pdf'), 'aep_6.pdf', {
        reply_deadline: new Date(Date.now() + 10 * 60_000).toISOString(),
      });
      const requested = await invoke(
        'scanRequest',
        'functions/scan/request.handler',
        await natsEvent(JSON.stringify(req)),
        functionEnvironment('scanRequest', { SCAN_RESULT_SUBJECT: subject }),
      );
      expect(requested).toMatchObject({ ok: true, body: 'started' });
      expect(requested.log.filter((l) => l.level === 'error')).toEqual([]);
      const inbox = path.join(share.root, 'Input', `${req.job_id}_aep_6.pdf`);
      expect(fs.readFileSync(inbox)).toEqual(fs.readFileSync(path.join(FIXTURES, 'inputs', 'aep_6.pdf')));
      const pollFunction = stackDefinition().functions.scanPoll.name;
      expect(lambdaApi.invokes).toEqual([
        { name: pollFunction, type: 'Event', payload: { lease_holder: expect.any(String) } },
      ]);

      // The scanning system answers, and still holds the answer open: the image's poller must not take it.
      await scanOnce({ root: share.root, fixturesDir: FIXTURES });
      const answer = fs.readdirSync(path.join(share.root, 'Output', req.job_id))[0];
      const pollEnv = functionEnvironment('scanPoll', { SCAN_RESULT_SUBJECT: subject });
      const held = await hold(`Output\\${req.job_id}\\${answer}`);
      let polled: Invocation;
      try {
        const run = startInvocation('scanPoll', 'functions/scan/poll.handler', lambdaApi.invokes[0].payload, pollEnv);
        // The image's poller finds the set settled but its open refused (sharing violation): not ready, not taken.
        const refused = await until(() => run.output().includes('scan_answer_not_ready'), 60_000);
        expect(refused).toBe(true);
        expect(run.output()).toMatch(/open refused \(EBUSY\)/);
        await nats().flush();
        expect(envelopes.map((e) => e.status)).toEqual(['processing']);
        await held.release();
        // Released, the same invocation takes it at its next pass.
        polled = await run.done;
      } finally {
        await held.release();
      }
      expect(polled).toMatchObject({ ok: true, body: { finished: 1 } });
      expect(polled.log.filter((l) => l.level === 'error')).toEqual([]);
      await nats().flush();
      await new Promise((r) => setTimeout(r, 100));
      expect(envelopes.map((e) => [e.job_id, e.status])).toEqual([
        [req.job_id, 'processing'],
        [req.job_id, 'done'],
      ]);
      const raw = await aws.s3.send(new GetObjectCommand({ Bucket: bucket, Key: envelopes[1].raw_s3_key! }));
      expect(await raw.Body!.transformToString()).toContain('DE89 3704 0044 0532 0130 00');
      expect(await new DynamoDbScanJobStore(aws.documents, table.name).get(req.job_id)).toMatchObject({
        state: 'finished',
      });
    } finally {
      sub.unsubscribe();
    }
  }, 300_000);

  it("the healthcheck, the image's third function, reaches the share", async () => {
    const run = await invoke(
      'healthcheck',
      'functions/health/healthcheck.handler',
      {},
      functionEnvironment('healthcheck'),
    );
    expect(run).toMatchObject({ ok: true, body: { statusCode: 200 } });
    expect(JSON.parse((run.body as { body: string }).body).checks.hotfolder).toBe('ok');
  }, 120_000);

  it("a command naming no handler fails the start, posted to the Runtime API's /init/error", async () => {
    const run = startInvocation(
      'missing handler',
      'functions/scan/missing.handler',
      {},
      functionEnvironment('scanPoll'),
    );
    await expect(run.done).rejects.toThrow(/failed to start|exited/);
    const api = await run.runtime;
    expect(api.initErrors).toEqual([expect.objectContaining({ errorType: 'Runtime.ImportModuleError' })]);
  }, 120_000);
});

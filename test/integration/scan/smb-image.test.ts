import { GetObjectCommand } from '@aws-sdk/client-s3';
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Msg } from 'nats';
import { scanOnce } from '../../../emulator/scanner/scanner';
import { natsEventFromMsg } from '../../../lib/nats/event';
import type { Envelope } from '../../../lib/scan/contract';
import { DynamoDbScanJobStore } from '../../../lib/scan/dynamodb-store';
import {
  readImageDockerfile,
  SCAN_DOCKERFILE,
  SCAN_IMAGE_FUNCTIONS,
  SMB_CLIENT_MARK,
  SMB_IMAGE_PACKAGES,
} from '../../../tools/deploy/scan-image';
import { Share, startSamba } from '../../support/samba';
import { aws, bucket, FIXTURES, nats, request, scanSuite, upload } from '../../support/scan';
import { isolatedTable, stackDefinition } from '../../support/stack';
import { readZip } from '../../support/zip';

/**
 * The scan functions' Lambda image without Docker (issue 39, docs/deploy.md "The SMB hot folder on AWS"): the zips
 * `serverless package` writes for the deployed target, unpacked into one task root as images/scan/Dockerfile
 * unpacks them, and each handler started by its own entry point in a fresh Node.js 24 process, as Lambda's runtime
 * starts it (test/support/lambda-runtime.cjs). The process has Lambda's variables and the function's own
 * (serverless.yml as the run's stack resolved it), nothing else: no HOME, no USER. As root runs this suite, it runs
 * as `nobody`, as Lambda runs a function as its sandbox account: a name in the password database, a home that does
 * not exist, write access nowhere but /tmp. `smbclient` is on its PATH; the share is a real Samba's; DynamoDB, S3
 * and NATS are the run's stack; the Lambda API is a stand-in that records the poller's start.
 */
scanSuite();

const ROOT = path.resolve(__dirname, '../../..');
const NODE_DIR = path.dirname(process.execPath);
const RUNTIME = path.join(ROOT, 'test/support/lambda-runtime.cjs');
/** The PATH of Lambda's Node.js images, with this run's Node.js 24 first (the image's is /var/lang/bin). */
const LAMBDA_PATH = `${NODE_DIR}:/usr/local/bin:/usr/bin:/bin`;

let work: string;
let share: Share;
let table: { name: string; drop: () => Promise<void> };
let packaged: { dir: string; ms: number; handlers: Record<string, string>; timeouts: Record<string, number> };
let taskRoot: string;
/** Every packaged function's bundle holding the SMB session's code. */
let smbBundles: string[];
let lambdaApi: { url: string; invokes: Array<{ name: string; type?: string; payload: unknown }>; close: () => void };
let account: Account | undefined;
const timings: string[] = [];

interface Account {
  uid: number;
  gid: number;
}

/** The accounts of the password database, by name. */
function accounts(): Map<string, Account> {
  return new Map(
    fs
      .readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(':'))
      .map(([name, , uid, gid]) => [name, { uid: Number(uid), gid: Number(gid) }]),
  );
}

/** Lambda's sandbox account as far as a process sees it: `nobody` (only root may run a process as another account). */
function lambdaAccount(): Account | undefined {
  return process.getuid?.() === 0 ? accounts().get('nobody') : undefined;
}

/** An account the password database does not list: the first free uid from 4242 up. */
function namelessAccount(): Account | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const taken = new Set([...accounts().values()].map((a) => a.uid));
  let uid = 4242;
  while (taken.has(uid)) uid++;
  return { uid, gid: uid };
}

/** The Lambda API's Invoke, as far as the request's start of the poller uses it: recorded, answered 202. */
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
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    invokes,
    close: () => server.close(),
  };
}

/** `serverless package` as an operator runs it before building the image: the deployed target, a stage's settings. */
async function packageService(): Promise<typeof packaged> {
  const dir = path.join(work, 'package');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    ESBUILD_WORK_DIR: path.relative(ROOT, path.join(work, 'esbuild')),
    // Endpoint settings of a stage (they reach the template, never the bundles).
    NATS_URL: 'tls://nats.example.internal:4222',
    TORRENT_CLIENT_URL: 'https://qbt.example.internal',
    TBANK_API_URL: 'https://invest-public-api.tbank.ru',
    PUBLIC_UI_URL: 'https://tss.example.com',
    FILES_BUCKET: 'tss-image-test-files',
    SCAN_SMB_SHARE: '//smb.example.internal/scan',
    // A kept stage is refused without someone its alarms reach (plugins/aws-access).
    ALARM_EMAILS: 'oncall@example.com',
  };
  delete env.DEPLOY_TARGET; // the stack's `local`: the image carries what the deployed target packages
  delete env.SCAN_FUNCTIONS_IMAGE; // these functions must be zips for the image to copy them
  // The stack's local hot folder: refused on AWS, where the share is SCAN_SMB_SHARE alone (decision 233).
  for (const name of ['SCAN_HOTFOLDER_ROOT', 'SCAN_HOTFOLDER_MODE', 'SCAN_HOTFOLDER_PATH']) delete env[name];
  const began = Date.now();
  const cli = path.join(ROOT, 'node_modules/osls/bin/serverless.js');
  await promisify(execFile)(process.execPath, [cli, 'package', '--stage', 'prod', '--package', dir], {
    cwd: ROOT,
    env,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((err: Error & { stdout?: string; stderr?: string }) => {
    throw new Error(`serverless package failed: ${err.message}\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
  });
  const ms = Date.now() - began;
  const state = JSON.parse(fs.readFileSync(path.join(dir, 'serverless-state.json'), 'utf8'));
  const functions = state.service.functions as Record<string, { handler: string; timeout?: number }>;
  const timeout = state.service.provider.timeout as number;
  return {
    dir,
    ms,
    handlers: Object.fromEntries(Object.entries(functions).map(([key, f]) => [key, f.handler])),
    timeouts: Object.fromEntries(Object.entries(functions).map(([key, f]) => [key, f.timeout ?? timeout])),
  };
}

/** The Dockerfile's first stage: every zip it copies unpacked into one folder, none overwriting another. */
function unpack(zips: string[], into: string): string[] {
  const written: string[] = [];
  for (const key of zips)
    for (const [name, body] of readZip(path.join(packaged.dir, `${key}.zip`))) {
      if (written.includes(name)) throw new Error(`${key}.zip would overwrite ${name}`);
      fs.mkdirSync(path.dirname(path.join(into, name)), { recursive: true, mode: 0o755 });
      fs.writeFileSync(path.join(into, name), body, { mode: 0o644 });
      written.push(name);
    }
  return written;
}

/** The function's configuration on the stack (provider and function variables), the hot folder on the share. */
function functionEnvironment(key: string, over: Record<string, string> = {}): Record<string, string> {
  const definition = stackDefinition();
  const fn = definition.functions[key] as { name: string; environment?: Record<string, string> };
  const e = process.env;
  return {
    // serverless.yml's variables for this function, as the stack resolved them for the local target.
    ...definition.provider.environment,
    ...(fn.environment ?? {}),
    TABLE_SCAN: table.name,
    SCAN_HOTFOLDER_ROOT: '',
    SCAN_SMB_SHARE: `//${share.host}/${share.share}`,
    SCAN_SMB_PORT: String(share.port),
    SCAN_SMB_USER: share.user,
    SCAN_SMB_PASSWORD: share.password,
    // What Lambda itself sets (its reserved variables), with the role's credentials and the endpoints that stand
    // in for AWS's here (the run's DynamoDB Local and S3; the recording Lambda API).
    _HANDLER: packaged.handlers[key],
    LAMBDA_TASK_ROOT: taskRoot,
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
    LANG: 'en_US.UTF-8',
    PATH: LAMBDA_PATH,
    ...over,
  };
}

interface Invocation {
  ok: boolean;
  result?: unknown;
  errorType?: string;
  errorMessage?: string;
  ms: number;
  /** The function's log lines (JSON ones parsed). */
  log: Array<Record<string, unknown>>;
  wallMs: number;
}

/** One cold invocation: a new process, as a new container's first request. */
async function invoke(
  key: string,
  event: unknown,
  env: Record<string, string>,
  as: Account | undefined = account,
): Promise<Invocation> {
  const io = fs.mkdtempSync(path.join(work, `io-${key}-`));
  if (as) fs.chownSync(io, as.uid, as.gid);
  const eventFile = path.join(io, 'event.json');
  const resultFile = path.join(io, 'result.json');
  fs.writeFileSync(eventFile, JSON.stringify(event), { mode: 0o644 });
  const began = Date.now();
  const child = spawn(process.execPath, [RUNTIME, eventFile, resultFile, String(packaged.timeouts[key])], {
    cwd: taskRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(as ?? {}),
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const wallMs = Date.now() - began;
  if (!fs.existsSync(resultFile)) throw new Error(`${key} exited ${code} without a result:\n${output}`);
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
  const outcome = JSON.parse(fs.readFileSync(resultFile, 'utf8')) as Omit<Invocation, 'log' | 'wallMs'>;
  timings.push(`${key}: ${wallMs} ms from process start to exit, ${outcome.ms} ms to load the bundle and run the call`);
  return { ...outcome, log, wallMs };
}

/** A message through the run's NATS, turned into the event the bridge gives a `nats` function. */
async function natsEvent(data: string): Promise<unknown> {
  const subject = `scan.requests.image.${randomUUID()}`;
  const got = new Promise<Msg>((resolve) =>
    nats().subscribe(subject, { max: 1, callback: (_err, msg) => resolve(msg) }),
  );
  await nats().flush();
  nats().publish(subject, data);
  return natsEventFromMsg(await got);
}

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'tss-smb-image-'));
  fs.chmodSync(work, 0o755);
  account = lambdaAccount();
  // Settled, not all: what did start must be stopped by afterAll even when another part failed (a running smbd
  // or HTTP server would keep jest from exiting).
  const [pkg, samba, isolated, api] = await Promise.allSettled([
    packageService(),
    (async () => {
      const dir = path.join(work, 'samba');
      fs.mkdirSync(dir);
      return startSamba(dir);
    })(),
    isolatedTable(aws, 'ScanTable'),
    startLambdaApi(),
  ]);
  const value = <T>(r: PromiseSettledResult<T>) => (r.status === 'fulfilled' ? r.value : undefined);
  // Assigned before the rethrow (afterAll reads them with `?.`); the `!` holds once no part failed.
  [share, table, lambdaApi, packaged] = [value(samba)!, value(isolated)!, value(api)!, value(pkg)!];
  for (const r of [pkg, samba, isolated, api]) if (r.status === 'rejected') throw r.reason;
  taskRoot = path.join(work, 'task');
  fs.mkdirSync(taskRoot, { mode: 0o755 });
  const dockerfile = readImageDockerfile(fs.readFileSync(path.join(ROOT, SCAN_DOCKERFILE), 'utf8'));
  unpack(dockerfile.zips, taskRoot);
  smbBundles = Object.keys(packaged.handlers).filter((key) =>
    [...readZip(path.join(packaged.dir, `${key}.zip`)).entries()].some(
      ([name, body]) => name.endsWith('.js') && body.includes(SMB_CLIENT_MARK),
    ),
  );
  fs.mkdirSync(path.join(share.root, 'Input'), { recursive: true });
}, 300_000);

afterAll(async () => {
  process.stdout.write(
    `[smb-image] serverless package ${(packaged?.ms / 1000).toFixed(1)} s; ` +
      `runs as ${account ? `uid ${account.uid} (nobody)` : 'this account'}\n` +
      timings.map((t) => `[smb-image]   ${t}\n`).join(''),
  );
  lambdaApi?.close();
  await table?.drop();
  await share?.service.stop();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('the image holds exactly the functions that reach the hot folder', () => {
  it('its Dockerfile copies one zip per function of SCAN_IMAGE_FUNCTIONS, and every bundle that can start smbclient is one', () => {
    const text = fs.readFileSync(path.join(ROOT, SCAN_DOCKERFILE), 'utf8');
    const dockerfile = readImageDockerfile(text);
    expect(dockerfile.zips).toEqual([...SCAN_IMAGE_FUNCTIONS]);
    // Samba's client, and the library and Python the exclusive read drives (decision 315); the build loads the
    // library's share-mode setting through the very interpreter the read starts, so a missing one fails the build.
    expect(dockerfile.packages).toEqual(expect.arrayContaining([...SMB_IMAGE_PACKAGES]));
    expect(text).toContain(
      `/usr/bin/python3 -c "import ctypes; ctypes.CDLL('libsmbclient.so.0').smbc_setOptionOpenShareMode"`,
    );
    expect(smbBundles.sort()).toEqual([...SCAN_IMAGE_FUNCTIONS].sort());
    // CMD is one of the image's handlers, the one a function naming no command runs.
    expect(dockerfile.cmd).toEqual([packaged.handlers.scanRequest]);
    // The build context lets through exactly those zips (the connector's habit: a Dockerfile's own ignore file).
    const ignore = fs.readFileSync(path.join(ROOT, `${SCAN_DOCKERFILE}.dockerignore`), 'utf8');
    expect(ignore.match(/^!.*$/gm)).toEqual(SCAN_IMAGE_FUNCTIONS.map((key) => `!.serverless/${key}.zip`));
    // docs/deploy.md builds it for the functions' architecture, from the root, with this file.
    const deployDoc = fs.readFileSync(path.join(ROOT, 'docs/deploy.md'), 'utf8');
    expect(deployDoc).toContain(`docker build --platform linux/arm64 -f ${SCAN_DOCKERFILE}`);
  });

  it('the task root holds each of their handlers as the bundle the test runs', () => {
    for (const key of SCAN_IMAGE_FUNCTIONS) {
      const handler = packaged.handlers[key];
      const file = path.join(taskRoot, `${handler.slice(0, handler.lastIndexOf('.'))}.js`);
      expect(fs.existsSync(file)).toBe(true);
      expect(fs.existsSync(`${file}.map`)).toBe(true);
    }
  });
});

describe('the packaged handlers, run as Lambda runs the image, on a real Samba share', () => {
  it("a request's file lands in the share's Input/, and the poller it starts collects the answer set", async () => {
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
        await natsEvent(JSON.stringify(req)),
        functionEnvironment('scanRequest', { SCAN_RESULT_SUBJECT: subject }),
      );
      expect(requested).toMatchObject({ ok: true, result: 'started' });
      const inbox = path.join(share.root, 'Input', `${req.job_id}_aep_6.pdf`);
      expect(fs.readFileSync(inbox)).toEqual(fs.readFileSync(path.join(FIXTURES, 'inputs', 'aep_6.pdf')));
      expect(fs.readdirSync(path.join(share.root, 'Tmp'))).toEqual([]); // written in Tmp/, then renamed
      expect(requested.log.filter((l) => l.level === 'error')).toEqual([]);
      // No poller held the lease: the request started one, asynchronously, as on AWS.
      const pollFunction = stackDefinition().functions.scanPoll.name;
      expect(lambdaApi.invokes).toEqual([
        { name: pollFunction, type: 'Event', payload: { lease_holder: expect.any(String) } },
      ]);

      // The scanning system answers on the share; the started poller runs with the event it was invoked with.
      await scanOnce({ root: share.root, fixturesDir: FIXTURES });
      const polled = await invoke(
        'scanPoll',
        lambdaApi.invokes[0].payload,
        functionEnvironment('scanPoll', { SCAN_RESULT_SUBJECT: subject }),
      );
      expect(polled).toMatchObject({ ok: true, result: { finished: 1 } });
      expect(polled.log.filter((l) => l.level === 'error')).toEqual([]);
      await nats().flush();
      await new Promise((r) => setTimeout(r, 100));
      expect(envelopes.map((e) => [e.job_id, e.status])).toEqual([
        [req.job_id, 'processing'],
        [req.job_id, 'done'],
      ]);
      expect(envelopes[1].raw_s3_key).toBe(`raw/${req.job_id}.json`);
      // The answer set, read from the share through smbclient, saved whole.
      const raw = await aws.s3.send(new GetObjectCommand({ Bucket: bucket, Key: envelopes[1].raw_s3_key! }));
      expect(await raw.Body!.transformToString()).toContain('DE89 3704 0044 0532 0130 00');
      const job = await new DynamoDbScanJobStore(aws.documents, table.name).get(req.job_id);
      expect(job).toMatchObject({ state: 'finished' });
    } finally {
      sub.unsubscribe();
    }
  }, 120_000);

  it('the healthcheck reaches the share through smbclient, a guest share too; without smbclient the hot folder is down', async () => {
    const health = async (over: Record<string, string>, as?: Account) => {
      const run = await invoke('healthcheck', {}, functionEnvironment('healthcheck', over), as ?? account);
      expect(run).toMatchObject({ ok: true, result: { statusCode: 200 } });
      return JSON.parse((run.result as { body: string }).body) as {
        checks: Record<string, string>;
        details?: Record<string, string>;
      };
    };
    expect((await health({})).checks.hotfolder).toBe('ok');
    const guestShare = {
      SCAN_SMB_SHARE: `//${share.host}/${share.guest.share}`,
      SCAN_SMB_USER: '',
      SCAN_SMB_PASSWORD: '',
    };
    expect((await health(guestShare)).checks.hotfolder).toBe('ok');
    // A guest share from an account without a name (another base image's user; HOME set, as such an image must
    // for the AWS SDK): smbclient finds no name to log in with unless it is given one (decision 264).
    const nameless = namelessAccount();
    if (nameless) expect((await health({ ...guestShare, HOME: '/tmp' }, nameless)).checks.hotfolder).toBe('ok');
    // What the zip runtime `nodejs24.x` would answer: no smbclient on PATH (sh and stdbuf still there).
    const bin = path.join(work, 'bin-without-smbclient');
    fs.mkdirSync(bin, { recursive: true, mode: 0o755 });
    for (const tool of ['/bin/sh', '/usr/bin/stdbuf']) fs.symlinkSync(tool, path.join(bin, path.basename(tool)));
    const zipRuntime = await health({ PATH: `${NODE_DIR}:${bin}` });
    expect(zipRuntime.checks.hotfolder).toBe('down');
  }, 60_000);
});

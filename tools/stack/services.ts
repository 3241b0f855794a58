import fs from 'node:fs';
import path from 'node:path';
import { connect, NatsConnection } from 'nats';
import { loadNatsConfig } from '../../lib/config';
import { natsOptions } from '../../lib/nats/connection';
import { ensureSystemDep } from './system-deps';
import { describeProcess, httpAnswers, listeners, tcpOpen } from './ports';
import { PortTakenError, RunningService, startProcess } from './process';

/** The processes of the embedded stack, each with a readiness probe of its own. */

export interface ServiceContext {
  root: string;
  logDir: string;
  say: (line: string) => void;
  /** serverless offline's HTTP URL (known before it starts): where emulators deliver webhooks. */
  httpUrl?: string;
}

const log = (ctx: ServiceContext, name: string) => path.join(ctx.logDir, `${name}.log`);

/** AWS's DynamoDBLocal.jar as shipped by the amplify-dynamodb-simulator package. */
export async function startDynamoDbLocal(ctx: ServiceContext, port: number, dataDir?: string): Promise<RunningService> {
  const java = ensureSystemDep('java', ctx.say);
  const home = path.join(path.dirname(require.resolve('amplify-dynamodb-simulator')), 'emulator');
  // -sharedDb: one database whatever the credentials/region (the S3 emulator dictates our keys).
  const storage = dataDir ? ['-dbPath', dataDir] : ['-inMemory'];
  // The jar has no bind option and listens on every interface: our launcher (run from source by the JRE,
  // nothing compiled ahead) builds the same server bound to loopback. -disableTelemetry: no calls out.
  const launcher = path.join(__dirname, 'dynamodb', 'LoopbackDynamoDbLocal.java');
  return startProcess({
    name: 'dynamodb-local',
    command: java,
    args: [
      `-Djava.library.path=${path.join(home, 'DynamoDBLocal_lib')}`,
      '-cp',
      path.join(home, 'DynamoDBLocal.jar'),
      launcher,
      ...storage,
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    cwd: home,
    logFile: log(ctx, 'dynamodb-local'),
    url: `http://127.0.0.1:${port}`,
    ready: () => httpAnswers(`http://127.0.0.1:${port}`),
    port,
  });
}

/** s3rver: the S3 API over a directory. */
export async function startS3Emulator(ctx: ServiceContext, port: number, dataDir: string): Promise<RunningService> {
  const bin = path.join(path.dirname(require.resolve('s3rver/package.json')), 'bin', 's3rver.js');
  return startProcess({
    name: 's3rver',
    command: process.execPath,
    args: [bin, '-d', dataDir, '-a', '127.0.0.1', '-p', String(port), '--no-vhost-buckets'],
    logFile: log(ctx, 's3rver'),
    url: `http://127.0.0.1:${port}`,
    ready: () => httpAnswers(`http://127.0.0.1:${port}`),
    port,
  });
}

/**
 * Core NATS only: JetStream stays off (the scan contract is core NATS; nothing here needs streams). With
 * credentials, clients must log in (a 0600 config file keeps the password
 * out of the process list).
 */
export type NatsLogin = { user: string; password: string } | { nkey: string };

export async function startNatsServer(ctx: ServiceContext, port: number, login?: NatsLogin): Promise<RunningService> {
  const bin = ensureSystemDep('nats', ctx.say);
  const auth: string[] = [];
  if (login) {
    const file = path.join(ctx.logDir, `nats-server-${port}.conf`);
    const users =
      'nkey' in login
        ? `{ nkey: ${JSON.stringify(login.nkey)} }`
        : `{ user: ${JSON.stringify(login.user)}, password: ${JSON.stringify(login.password)} }`;
    fs.writeFileSync(file, `authorization {\n  users = [ ${users} ]\n}\n`, { mode: 0o600 });
    auth.push('-c', file);
  }
  return startProcess({
    name: 'nats-server',
    command: bin,
    args: [...auth, '-a', '127.0.0.1', '-p', String(port), '-n', 'local-stack'],
    logFile: log(ctx, 'nats-server'),
    url: `nats://127.0.0.1:${port}`,
    ready: () => tcpOpen(port),
    port,
  });
}

export interface OfflineOptions {
  httpPort: number;
  lambdaPort: number;
  stage: string;
  env: NodeJS.ProcessEnv;
  /** With the connector as NATS trigger, offline is ready on HTTP alone (the connector proves NATS). */
  natsTrigger: NatsTrigger;
}

/** Who bridges NATS to the functions locally: offline's plugin, or the cloud connector as its own process. */
export type NatsTrigger = 'plugin' | 'connector';

/** A NATS request through the trigger to natsPing and back: the proof that the bridge works end to end. */
function natsPingProbe(env: NodeJS.ProcessEnv) {
  return {
    // A connection per probe: the same probe runs again when the supervisor restarts the service.
    answers: async () => {
      let nc: NatsConnection | undefined;
      try {
        nc = await connect({ ...natsOptions(loadNatsConfig(env), 'stack-probe'), timeout: 1000 });
        await nc.request('health.ping', 'ready?', { timeout: 1000 });
        return true;
      } catch {
        return false;
      } finally {
        await nc?.close().catch(() => undefined);
      }
    },
    close: async () => undefined,
  };
}

/**
 * The Node.js version the functions run on, as natsPing reports it through
 * NATS → trigger → function; undefined when the ping does not come back.
 */
export async function functionsNodeVersion(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  let nc: NatsConnection | undefined;
  try {
    nc = await connect({ ...natsOptions(loadNatsConfig(env), 'stack-probe'), timeout: 2000 });
    const reply = await nc.request('health.ping', 'node?', { timeout: 5000 });
    const node = (reply.json() as { node?: unknown }).node;
    return typeof node === 'string' ? node : undefined;
  } catch {
    return undefined;
  } finally {
    await nc?.close().catch(() => undefined);
  }
}

/**
 * How long offline may take to answer (STACK_READY_TIMEOUT_MS, default 120 s):
 * esbuild bundles every function first, which on a loaded 2-core machine can
 * take longer than that.
 */
export function readyTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const given = env.STACK_READY_TIMEOUT_MS?.trim();
  if (!given) return 120_000;
  const ms = Number(given);
  if (!Number.isInteger(ms) || ms < 1000)
    throw new Error(`STACK_READY_TIMEOUT_MS must be a whole number of milliseconds (1000 or more), got ${given}`);
  return ms;
}

/**
 * `serverless offline start` (start, not plain offline: only `start` runs the
 * init/end hooks our NATS plugin needs). Ready when HTTP answers AND a
 * health.ping goes through NATS → bridge → function → reply.
 */
export async function startOffline(ctx: ServiceContext, opts: OfflineOptions): Promise<RunningService> {
  const cli = path.join(path.dirname(require.resolve('osls/package.json')), 'bin', 'serverless.js');
  // Fixed ports (the URLs people use): a held one stops the start now, before a minute of bundling.
  for (const port of [opts.httpPort, opts.lambdaPort]) {
    const held = listeners(port);
    if (held?.length)
      throw new PortTakenError(
        'serverless-offline',
        log(ctx, 'serverless-offline'),
        port,
        describeProcess(held[0].pid),
        'another stack on this machine? npm start takes other ports from HTTP_PORT and LAMBDA_PORT',
      );
  }
  const probe = natsPingProbe(opts.env);
  const natsPingAnswers = async () => opts.natsTrigger === 'connector' || probe.answers();
  try {
    return await startProcess({
      name: 'serverless-offline',
      command: process.execPath,
      args: [
        cli,
        'offline',
        'start',
        '--stage',
        opts.stage,
        '--httpPort',
        String(opts.httpPort),
        '--lambdaPort',
        String(opts.lambdaPort),
      ],
      cwd: ctx.root,
      env: { ...opts.env, NATS_TRIGGER: opts.natsTrigger },
      logFile: log(ctx, 'serverless-offline'),
      url: `http://127.0.0.1:${opts.httpPort}`,
      readyTimeoutMs: readyTimeoutMs(),
      ready: async () => (await httpAnswers(`http://127.0.0.1:${opts.httpPort}/healthcheck`)) && natsPingAnswers(),
      port: opts.httpPort,
    });
  } finally {
    await probe.close();
  }
}

export interface ConnectorOptions {
  /** The service definition (`serverless print` output) the connector reads its routes from. */
  definitionFile: string;
  healthPort: number;
  env: NodeJS.ProcessEnv;
  /** Log file name under the log dir (tests run several connectors). */
  name?: string;
}

/**
 * The cloud NATS connector (connector/) as its own process, against offline's
 * Lambda endpoint (AWS_ENDPOINT_URL_LAMBDA in env). Ready when its health
 * endpoint answers 200 AND a health.ping goes through it.
 */
export async function startNatsConnector(ctx: ServiceContext, opts: ConnectorOptions): Promise<RunningService> {
  const name = opts.name ?? 'nats-connector';
  const probe = natsPingProbe(opts.env);
  const url = `http://127.0.0.1:${opts.healthPort}/health`;
  try {
    return await startProcess({
      name,
      command: process.execPath,
      // One process (node with tsx's loader), so a signal reaches the connector itself.
      args: ['--import', 'tsx', path.join(ctx.root, 'connector', 'main.ts')],
      cwd: ctx.root,
      env: { ...opts.env, SERVICE_DEFINITION: opts.definitionFile, HEALTH_PORT: String(opts.healthPort) },
      logFile: log(ctx, name),
      url,
      ready: async () => (await healthOk(url)) && probe.answers(),
      port: opts.healthPort,
    });
  } finally {
    await probe.close();
  }
}

async function healthOk(url: string): Promise<boolean> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
}

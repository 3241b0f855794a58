import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { grantJson, newToken, SCOPES } from '../../lib/auth/tokens';
import { applyResources, planResources } from './resources';
import { newKeyringEntry } from '../../lib/secrets/sealer';
import { emulators } from './emulators';
import { loadServiceDefinition, ServiceDefinition } from './definition';
import { freePort, retryLostPort } from './ports';
import { RunningService, ServiceDeath } from './process';
import {
  NatsTrigger,
  ServiceContext,
  startDynamoDbLocal,
  startNatsConnector,
  startNatsServer,
  functionsNodeVersion,
  startOffline,
  startS3Emulator,
} from './services';

/**
 * The embedded local stack (docs/architecture.md): DynamoDB Local, the S3 emulator and
 * nats-server on loopback, resources bootstrapped from serverless.yml, the
 * emulators of emulator/, then `serverless offline`. Used by `npm start`, by
 * the test harness and by the benchmarks, so all three run the same stack.
 *
 * An endpoint given in `external` is used as is and not started (LocalStack,
 * a NATS server you run yourself).
 */

export interface StackOptions {
  root: string;
  stateDir: string;
  stage?: string;
  /** Ports to try first; a busy or missing one is replaced by a free port. */
  preferredPorts?: Partial<Record<'dynamodb' | 's3' | 'nats', number>>;
  /** How DynamoDB's, S3's and NATS's ports are picked (ports.ts's freePort); tests give a check that lost its race. */
  pickPort?: (preferred?: number) => Promise<number>;
  /** Offline's ports are fixed: a busy one is an error, not a surprise port. */
  httpPort?: number;
  lambdaPort?: number;
  external?: { dynamodb?: string; s3?: string; nats?: string };
  /** Keep DynamoDB's and S3's data here across runs; by default both start empty. */
  dataDir?: string;
  offline?: boolean;
  /** Who bridges NATS to the functions: offline's plugin (default) or the connector process (connector/). */
  natsTrigger?: NatsTrigger;
  emulators?: boolean;
  /** npm start: a system whose settings are given (e.g. TORRENT_CLIENT_URL + credentials) is used instead of its emulator. */
  useExternal?: boolean;
  /** AUTH_TOKENS for the authorizer; by default AUTH_TOKENS of the environment, else a dev token made for this run. */
  authTokens?: string;
  say?: (line: string) => void;
  /** A service died after start and was not brought back: the stack is already stopped when this is called. */
  onFatal?: (death: ServiceDeath) => void;
}

export interface Stack {
  /** The environment the service's code needs to reach this stack. */
  env: Record<string, string>;
  definition: ServiceDefinition;
  services: RunningService[];
  /** The all-scopes token generated for this run, when no AUTH_TOKENS was given. */
  devToken?: string;
  stop(): Promise<void>;
}

// s3rver accepts exactly these keys; DynamoDB Local (with -sharedDb) takes any.
const LOCAL_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };

export async function startStack(options: StackOptions): Promise<Stack> {
  const say = options.say ?? (() => undefined);
  const stage = options.stage ?? 'dev';
  const logDir = path.join(options.stateDir, 'logs');
  fs.mkdirSync(logDir, { recursive: true });
  const ctx: ServiceContext = {
    root: options.root,
    logDir,
    say,
    httpUrl: `http://127.0.0.1:${options.httpPort ?? 3000}`,
  };
  const services: RunningService[] = [];
  const stop = async () => {
    for (const service of services.splice(0).reverse()) await service.stop();
  };

  try {
    const ext = options.external ?? {};
    const auth = authTokens(options.authTokens ?? process.env.AUTH_TOKENS);
    // Our own nats-server requires a login made for this run; an external one uses the NATS_ variables given.
    const natsLogin = ext.nats ? undefined : { user: 'stack', password: randomBytes(18).toString('base64url') };
    // Everything but the endpoints, which are known once each service holds its port.
    const commonEnv: Record<string, string> = {
      AUTH_TOKENS: auth.tokens,
      SYNC_TOKEN_KEYS: process.env.SYNC_TOKEN_KEYS?.trim() || tokenKeyring(options.dataDir),
      // Browser sessions end with the stack unless SESSION_KEYS is given.
      SESSION_KEYS: process.env.SESSION_KEYS?.trim() || newKeyringEntry('local'),
      AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
      ...(ext.dynamodb || ext.s3 ? { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' } : LOCAL_CREDENTIALS),
      AWS_EC2_METADATA_DISABLED: 'true',
      // The local swarm is loopback (npm run torrent:seed's peers and trackers): the stack lets magnets name it.
      MAGNET_ALLOW_PRIVATE_ADDRESSES: process.env.MAGNET_ALLOW_PRIVATE_ADDRESSES?.trim() || 'true',
      ...(natsLogin
        ? { NATS_USER: natsLogin.user, NATS_PASSWORD: natsLogin.password, NATS_NKEY_SEED: '', NATS_JWT: '' }
        : {}),
      // serverless.yml's local target: offline's plugins, secrets from this environment (docs/deploy.md).
      DEPLOY_TARGET: 'local',
      SLS_TELEMETRY_DISABLED: '1',
      SLS_NOTIFICATIONS_MODE: 'off',
    };

    const started = (p: Promise<RunningService>) => p.then((s) => (services.push(s), s));
    // A preferred port first; a start that lost its port to another stack (EADDRINUSE, or another process
    // answering there once ready) starts again on a port picked then (tools/stack/ports.ts).
    const startOn = (name: 'dynamodb' | 's3' | 'nats', start: (port: number) => Promise<RunningService>) =>
      started(retryLostPort(async () => start(await (options.pickPort ?? freePort)(options.preferredPorts?.[name]))));
    const s3Dir = options.dataDir ? path.join(options.dataDir, 's3') : path.join(options.stateDir, 's3');
    if (!options.dataDir) fs.rmSync(s3Dir, { recursive: true, force: true });
    fs.mkdirSync(s3Dir, { recursive: true });
    const dynamodbDir = options.dataDir ? path.join(options.dataDir, 'dynamodb') : undefined;
    if (dynamodbDir) fs.mkdirSync(dynamodbDir, { recursive: true });
    const results = await Promise.allSettled([
      loadServiceDefinition(options.root, { ...process.env, ...commonEnv }, stage),
      ext.dynamodb ? undefined : startOn('dynamodb', (port) => startDynamoDbLocal(ctx, port, dynamodbDir)),
      ext.s3 ? undefined : startOn('s3', (port) => startS3Emulator(ctx, port, s3Dir)),
      ext.nats ? undefined : startOn('nats', (port) => startNatsServer(ctx, port, natsLogin)),
    ]);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const [definition, dynamodb, s3, nats] = results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as [
      ServiceDefinition,
      RunningService | undefined,
      RunningService | undefined,
      RunningService | undefined,
    ];
    const endpoints = {
      dynamodb: ext.dynamodb ?? dynamodb!.url,
      s3: ext.s3 ?? s3!.url,
      nats: ext.nats ?? nats!.url,
    };
    const baseEnv: Record<string, string> = {
      ...commonEnv,
      AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
      AWS_ENDPOINT_URL_S3: endpoints.s3,
      NATS_URL: endpoints.nats,
    };

    // Printed before NATS had its port: the definition says the stack's NATS, as the functions see it.
    definition.provider.environment.NATS_URL = endpoints.nats;
    const env: Record<string, string> = { ...baseEnv, ...definition.provider.environment };
    const bootstrap = await bootstrapResources(definition, env);
    say(`resources: ${bootstrap.created.length} created, ${bootstrap.existing.length} already there`);

    if (options.emulators ?? true) {
      for (const emulator of emulators) {
        if (options.useExternal && (await emulator.external?.(ctx, process.env))) continue;
        const { service, env: contributed } = await retryLostPort(() => emulator.start(ctx, env));
        if (service) services.push(service);
        Object.assign(env, contributed);
      }
    }
    if (options.offline ?? true) {
      // Async step invocations go through offline's Lambda endpoint, as InvokeCommand would on AWS.
      env.AWS_ENDPOINT_URL_LAMBDA = `http://127.0.0.1:${options.lambdaPort ?? 3002}`;
      const esbuildWork = path.relative(options.root, path.join(options.stateDir, 'esbuild'));
      await started(
        startOffline(ctx, {
          stage,
          httpPort: options.httpPort ?? 3000,
          lambdaPort: options.lambdaPort ?? 3002,
          // LOCAL_METRICS_LOG: the console reads the functions' EMF lines back from offline's log (lib/metrics/local.ts).
          env: {
            ...process.env,
            ...env,
            ESBUILD_WORK_DIR: esbuildWork,
            LOCAL_METRICS_LOG: path.join(logDir, 'serverless-offline.log'),
          },
          natsTrigger: options.natsTrigger ?? 'plugin',
        }),
      );
      if (options.natsTrigger === 'connector') {
        const definitionFile = path.join(options.stateDir, 'service-definition.json');
        fs.writeFileSync(definitionFile, JSON.stringify(definition));
        env.NATS_CONNECTOR_DEFINITION = definitionFile;
        const connector = await started(
          startNatsConnector(ctx, { definitionFile, healthPort: await freePort(), env: { ...process.env, ...env } }),
        );
        env.NATS_CONNECTOR_HEALTH = connector.url;
      }
      await sayFunctionsNode(definition.provider.runtime, env, say);
    }
    superviseAll(services, { say, stop, onFatal: options.onFatal, keepsData: !!options.dataDir });
    return { env, definition, services, devToken: auth.devToken, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Never a silent half-dead stack: a service that dies after start is named
 * with its log and restarted (same port), or the whole stack stops loudly.
 * DynamoDB Local in memory is not restarted: it would come back empty, every
 * table gone, which is worse than stopping.
 */
function superviseAll(
  services: RunningService[],
  opts: {
    say: (line: string) => void;
    stop: () => Promise<void>;
    onFatal?: (death: ServiceDeath) => void;
    keepsData: boolean;
  },
) {
  for (const service of services) {
    service.supervise({
      restart: service.name !== 'dynamodb-local' || opts.keepsData,
      onDeath: (death) => {
        if (death.outcome === 'restarted') {
          opts.say(
            `${death.service} (pid ${death.pid}) died after start: ${death.reason}; restarted as pid ${death.newPid} (log: ${death.logFile})`,
          );
          return;
        }
        opts.say(
          `FATAL: ${death.service} (pid ${death.pid}) died after start: ${death.reason}; ${death.detail} (log: ${death.logFile}). Stopping the stack.`,
        );
        void opts.stop().then(() => opts.onFatal?.(death));
      },
    });
  }
}

/**
 * Local is Lambda: the functions must run on the Node.js major of the Lambda
 * runtime (npm's scripts run the pinned node in node_modules/.bin). Said once
 * at start, loudly when the majors differ.
 */
async function sayFunctionsNode(runtime: string, env: Record<string, string>, say: (line: string) => void) {
  const node = await functionsNodeVersion(env);
  const lambdaMajor = /^nodejs(\d+)\.x$/.exec(runtime)?.[1];
  const major = node && /^v(\d+)\./.exec(node)?.[1];
  if (!node) say(`functions  Node.js version unknown (health.ping did not answer); Lambda runs ${runtime}`);
  else if (major === lambdaMajor) say(`functions  run on Node.js ${node} (Lambda: ${runtime})`);
  else
    say(
      `WARNING: functions run on Node.js ${node} but Lambda runs ${runtime}: start the stack with npm's scripts, which run the pinned Node.js ${lambdaMajor}`,
    );
}

/** The configured grants, or one all-scopes grant for a token made now (printed by `npm start`, never stored). */
function authTokens(configured: string | undefined): { tokens: string; devToken?: string } {
  if (configured?.trim()) return { tokens: configured };
  const devToken = newToken();
  return { tokens: JSON.stringify([grantJson('dev', devToken, SCOPES)]), devToken };
}

/** A keyring for brokerage tokens: kept in the data dir when data persists (its tokens must still open), else new per run. */
function tokenKeyring(dataDir: string | undefined): string {
  if (!dataDir) return newKeyringEntry('local');
  const file = path.join(dataDir, 'sync-token-keys');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, newKeyringEntry('local'), { mode: 0o600 });
  }
  return fs.readFileSync(file, 'utf8').trim();
}

/** Creates the template's tables and buckets on the endpoints in env, idempotently. */
export async function bootstrapResources(definition: ServiceDefinition, env: Record<string, string>) {
  const region = env.AWS_REGION;
  const credentials = { accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY };
  const dynamodb = new DynamoDBClient({ region, credentials, endpoint: env.AWS_ENDPOINT_URL_DYNAMODB });
  const s3 = new S3Client({ region, credentials, endpoint: env.AWS_ENDPOINT_URL_S3, forcePathStyle: true });
  try {
    return await applyResources(planResources(definition.resources.Resources), { dynamodb, s3 });
  } finally {
    dynamodb.destroy();
    s3.destroy();
  }
}

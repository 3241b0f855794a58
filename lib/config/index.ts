import { Env, EnvReader } from './env';
import { perEnvironment } from './generation';
import { natsConfig, NatsConfig } from './nats';

export { ConfigError } from './errors';
export { environmentChanged, environmentGeneration, perEnvironment } from './generation';
export { loadNatsConfig, type NatsAuth, type NatsConfig } from './nats';

/**
 * The shared configuration of the service: its name, stage and region, the
 * AWS endpoints, the tables and bucket every domain's stores are built on,
 * NATS and the healthcheck's bound. Every handler and tool loads it through
 * `loadConfig`, which fails fast naming each bad variable.
 *
 * A domain's own settings are loaded beside its code (lib/scan/config.ts,
 * lib/sync/config.ts, lib/torrents/config.ts, lib/telegram/config.ts,
 * lib/auth/config.ts), each by the functions that use it: this module knows
 * no domain, so a function's bundle carries only the loaders it calls.
 *
 * AWS endpoints are NOT settings of ours: the SDK reads AWS_ENDPOINT_URL_DYNAMODB
 * and AWS_ENDPOINT_URL_S3 itself, so the same code runs on AWS, LocalStack or the
 * embedded stack. We read them only to validate them and to pick path-style S3.
 */
export interface Config {
  service: string;
  stage: string;
  region: string;
  endpoints: { dynamodb?: string; s3?: string };
  tables: { downloads: string; sync: string; scan: string };
  buckets: { files: string };
  nats: NatsConfig;
  health: { probeTimeoutMs: number };
}

/** The service's name and a DynamoDB table's (also TABLE_TELEGRAM, read by lib/telegram/config.ts). */
export const RESOURCE_NAME = /^[A-Za-z0-9._-]{3,255}$/;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function loadConfig(env: Env = process.env): Config {
  const r = new EnvReader(env);
  const config: Config = {
    service: r.string('SERVICE_NAME', {
      default: 'torrent-scan-sync',
      pattern: RESOURCE_NAME,
      hint: 'a name of 3-255 [A-Za-z0-9._-]',
    }),
    stage: r.string('STAGE', {
      default: 'dev',
      pattern: /^[a-z0-9-]{1,32}$/,
      hint: 'lowercase letters, digits and dashes',
    }),
    region: r.string('AWS_REGION', {
      default: 'us-east-1',
      pattern: /^[a-z]{2}(-[a-z]+)+-\d$/,
      hint: 'an AWS region like eu-west-1',
    }),
    endpoints: {
      dynamodb: r.url('AWS_ENDPOINT_URL_DYNAMODB', ['http', 'https'], { optional: true }),
      s3: r.url('AWS_ENDPOINT_URL_S3', ['http', 'https'], { optional: true }),
    },
    tables: {
      downloads: r.string('TABLE_DOWNLOADS', { pattern: RESOURCE_NAME, hint: 'a DynamoDB table name' }),
      sync: r.string('TABLE_SYNC', { pattern: RESOURCE_NAME, hint: 'a DynamoDB table name' }),
      scan: r.string('TABLE_SCAN', { pattern: RESOURCE_NAME, hint: 'a DynamoDB table name' }),
    },
    buckets: {
      files: r.string('BUCKET_FILES', { pattern: BUCKET, hint: 'an S3 bucket name' }),
    },
    nats: natsConfig(r),
    health: {
      probeTimeoutMs: r.int('HEALTH_PROBE_TIMEOUT_MS', { default: 2000, min: 100, max: 10000 }),
    },
  };
  r.done();
  return config;
}

/**
 * The process's config, loaded once per environment generation (Lambda containers are reused across
 * invocations; NATS credentials read at run time may be rotated: ./generation.ts).
 */
export const config: () => Config = perEnvironment(() => loadConfig());

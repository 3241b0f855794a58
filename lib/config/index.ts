import { parseTokenGrants, TokenGrant } from '../auth/tokens';
import { Keyring, parseKeyring } from '../secrets/sealer';
import { ConfigError, Env, EnvReader } from './env';

export { ConfigError } from './env';

/**
 * The one typed configuration of the service. Every handler and tool loads it
 * through `loadConfig`, which fails fast naming each bad variable.
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

const NAME = /^[A-Za-z0-9._-]{3,255}$/;
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function loadConfig(env: Env = process.env): Config {
  const r = new EnvReader(env);
  const config: Config = {
    service: r.string('SERVICE_NAME', { default: 'torrent-scan-sync', pattern: NAME, hint: 'a name of 3-255 [A-Za-z0-9._-]' }),
    stage: r.string('STAGE', { default: 'dev', pattern: /^[a-z0-9-]{1,32}$/, hint: 'lowercase letters, digits and dashes' }),
    region: r.string('AWS_REGION', { default: 'us-east-1', pattern: /^[a-z]{2}(-[a-z]+)+-\d$/, hint: 'an AWS region like eu-west-1' }),
    endpoints: {
      dynamodb: r.url('AWS_ENDPOINT_URL_DYNAMODB', ['http', 'https'], { optional: true }),
      s3: r.url('AWS_ENDPOINT_URL_S3', ['http', 'https'], { optional: true }),
    },
    tables: {
      downloads: r.string('TABLE_DOWNLOADS', { pattern: NAME, hint: 'a DynamoDB table name' }),
      sync: r.string('TABLE_SYNC', { pattern: NAME, hint: 'a DynamoDB table name' }),
      scan: r.string('TABLE_SCAN', { pattern: NAME, hint: 'a DynamoDB table name' }),
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

/** NATS: the servers, and at most one kind of credentials. */
export interface NatsConfig {
  servers: string[];
  auth: NatsAuth;
}

export type NatsAuth =
  | { kind: 'none' }
  | { kind: 'user'; user: string; password: string }
  | { kind: 'nkey'; seed: string }
  | { kind: 'jwt'; jwt: string; seed: string };

/** The NATS settings alone, for tools and the offline bridge that need nothing else. */
export function loadNatsConfig(env: Env = process.env): NatsConfig {
  const r = new EnvReader(env);
  const nats = natsConfig(r);
  r.done();
  return nats;
}

const NKEY_USER_SEED = /^SU[A-Z2-7]{56}$/;

/**
 * NATS_USER + NATS_PASSWORD, or NATS_NKEY_SEED (+ NATS_JWT for a decentralised
 * account), or nothing. A half pair or two kinds at once is refused by name:
 * connecting without the credentials one meant to give fails much later and less clearly.
 */
function natsConfig(r: EnvReader): NatsConfig {
  const servers = r.urlList('NATS_URL', ['nats', 'tls'], { default: 'nats://127.0.0.1:4222' });
  const userPass = r.has('NATS_USER') || r.has('NATS_PASSWORD');
  const keyed = r.has('NATS_NKEY_SEED') || r.has('NATS_JWT');
  if (userPass && keyed) {
    r.refuse('NATS_USER', 'and NATS_NKEY_SEED are both set: give user/password OR an nkey seed (with its JWT), not both');
    return { servers, auth: { kind: 'none' } };
  }
  if (userPass) {
    const user = r.string('NATS_USER', { hint: 'set it with NATS_PASSWORD' });
    const password = r.string('NATS_PASSWORD', { hint: 'set it with NATS_USER' });
    return { servers, auth: { kind: 'user', user, password } };
  }
  if (!keyed) return { servers, auth: { kind: 'none' } };
  const seed = r.string('NATS_NKEY_SEED', { pattern: NKEY_USER_SEED, hint: 'a user nkey seed (SU…, 58 characters)', secret: true });
  if (!r.has('NATS_JWT')) return { servers, auth: { kind: 'nkey', seed } };
  const jwt = r.string('NATS_JWT', { pattern: /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, hint: 'a user JWT (three base64url parts)', secret: true });
  return { servers, auth: { kind: 'jwt', jwt, seed } };
}

/** The torrent client the downloads domain drives (qBittorrent Web API v2). */
export interface TorrentClientConfig {
  url: string;
  username: string;
  password: string;
  timeoutMs: number;
}

// Loaded apart from Config: only the downloads functions need it, and a
// missing password must not take the healthcheck or the scan gateway down.
export function loadTorrentClientConfig(env: Env = process.env): TorrentClientConfig {
  const r = new EnvReader(env);
  const config: TorrentClientConfig = {
    url: r.url('TORRENT_CLIENT_URL', ['http', 'https']),
    username: r.string('TORRENT_CLIENT_USERNAME', { default: 'admin' }),
    password: r.string('TORRENT_CLIENT_PASSWORD'),
    timeoutMs: r.int('TORRENT_CLIENT_TIMEOUT_MS', { default: 5000, min: 100, max: 60000 }),
  };
  r.done();
  return config;
}

/** The hourly sync's settings (sync functions only). */
export interface SyncConfig {
  /** T-Bank Invest API base: production https://invest-public-api.tbank.ru, sandbox https://sandbox-invest-public-api.tbank.ru, the emulator locally. */
  tbankUrl: string;
  /** x-app-name on every T-Bank call. */
  tbankAppName: string;
  /** The rate limits' "minute" (60 s; scaled down only against the emulator in tests). */
  tbankRateWindowMs: number;
  /** How far back the first sync of an account reads operations. */
  historyDays: number;
  stepFunction: string;
  /** How long the attempt waits for a step before it counts as DEADLINE (15 min; shorter only in tests). */
  waitBoundMs: number;
  /** A step's own bound, below its Lambda timeout so its finish is always written. */
  stepTimeoutMs: number;
}

export function loadSyncConfig(env: Env = process.env): SyncConfig {
  const r = new EnvReader(env);
  const config: SyncConfig = {
    tbankUrl: r.url('TBANK_API_URL', ['http', 'https']),
    tbankAppName: r.string('TBANK_APP_NAME', { default: 'torrent-scan-sync', pattern: /^[A-Za-z0-9._-]{1,64}$/, hint: 'an application name' }),
    tbankRateWindowMs: r.int('TBANK_RATE_WINDOW_MS', { default: 60_000, min: 100, max: 60_000 }),
    historyDays: r.int('SYNC_HISTORY_DAYS', { default: 3 * 365, min: 1, max: 20 * 365 }),
    stepFunction: r.string('SYNC_STEP_FUNCTION', { pattern: /^[A-Za-z0-9_-]{1,140}$/, hint: 'a Lambda function name' }),
    waitBoundMs: r.int('WORK_WAIT_BOUND_MS', { default: 15 * 60 * 1000, min: 100, max: 24 * 60 * 60 * 1000 }),
    stepTimeoutMs: r.int('SYNC_STEP_TIMEOUT_MS', { default: 25_000, min: 100, max: 14 * 60 * 1000 }),
  };
  r.done();
  return config;
}

/** The scan gateway's settings (scan functions only; DESIGN §4). */
export type HotFolderConfig =
  | { kind: 'local'; root: string }
  | { kind: 'smb'; host: string; port?: number; share: string; user: string; password: string };

export interface ScanConfig {
  resultSubject: string;
  hotFolder: HotFolderConfig;
  dirs: { input: string; output: string; tmp: string };
  maxInflight: number;
  settleMs: number;
  timeoutMs: number;
  pollEveryMs: number;
  publishRetries: number;
  normalizer: 'content-ai' | 'null';
  confidenceThreshold: number;
}

const DIR = /^[A-Za-z0-9][A-Za-z0-9 _-]{0,63}$/;

export function loadScanConfig(env: Env = process.env): ScanConfig {
  const r = new EnvReader(env);
  const normalizer = r.string('SCAN_NORMALIZER', { default: 'content-ai', pattern: /^(content-ai|null)$/, hint: 'content-ai or null' });
  const threshold = r.int('SCAN_CONFIDENCE_PERCENT', { default: 80, min: 0, max: 100 });
  const config: ScanConfig = {
    resultSubject: r.string('SCAN_RESULT_SUBJECT', { default: 'scan.results', pattern: /^[^\s.*>]+(\.[^\s.*>]+)*$/, hint: 'a NATS subject without wildcards' }),
    hotFolder: hotFolderConfig(r),
    dirs: {
      input: r.string('SCAN_INPUT_DIR', { default: 'Input', pattern: DIR, hint: 'a folder name' }),
      output: r.string('SCAN_OUTPUT_DIR', { default: 'Output', pattern: DIR, hint: 'a folder name' }),
      tmp: r.string('SCAN_TMP_DIR', { default: 'Tmp', pattern: DIR, hint: 'a folder name' }),
    },
    maxInflight: r.int('SCAN_MAX_INFLIGHT', { default: 4, min: 1, max: 1000 }),
    settleMs: r.int('SCAN_SETTLE_SECONDS', { default: 2, min: 0, max: 3600 }) * 1000,
    timeoutMs: r.int('SCAN_TIMEOUT_SECONDS', { default: 300, min: 1, max: 86400 }) * 1000,
    pollEveryMs: r.int('SCAN_POLL_SECONDS', { default: 1, min: 1, max: 60 }) * 1000,
    publishRetries: r.int('PUBLISH_RETRIES', { default: 3, min: 0, max: 10 }),
    normalizer: normalizer as ScanConfig['normalizer'],
    confidenceThreshold: threshold / 100,
  };
  r.done();
  return config;
}

const SMB_VARIABLES = ['SCAN_SMB_SHARE', 'SCAN_SMB_USER', 'SCAN_SMB_PASSWORD'];

/** A local folder (SCAN_HOTFOLDER_ROOT), or an SMB share: all of SCAN_SMB_SHARE/USER/PASSWORD or none. */
function hotFolderConfig(r: EnvReader): HotFolderConfig {
  const given = SMB_VARIABLES.filter((name) => r.has(name));
  if (given.length === 0) return { kind: 'local', root: r.string('SCAN_HOTFOLDER_ROOT', { pattern: /^\//, hint: 'an absolute path' }) };
  if (given.length < SMB_VARIABLES.length) {
    for (const name of SMB_VARIABLES.filter((n) => !given.includes(n))) r.string(name, { hint: 'set with the other SCAN_SMB_ variables' });
  }
  const share = r.string('SCAN_SMB_SHARE', { pattern: /^\/\/[A-Za-z0-9.-]+\/[^/\\]+$/, hint: '//host/share' });
  const [, , host, name] = share.split('/');
  const port = r.int('SCAN_SMB_PORT', { default: 445, min: 1, max: 65535 });
  return { kind: 'smb', host, port, share: name, user: r.string('SCAN_SMB_USER'), password: r.string('SCAN_SMB_PASSWORD') };
}

let cached: Config | undefined;

/** The process's config, loaded once (Lambda containers are reused across invocations). */
export function config(): Config {
  cached ??= loadConfig();
  return cached;
}

/** The API authorizer's settings (authorizer function only). */
export interface AuthConfig {
  grants: TokenGrant[];
}

/** AUTH_TOKENS: the JSON list of token grants, hashes only (lib/auth/tokens). */
export function loadAuthConfig(env: Env = process.env): AuthConfig {
  const r = new EnvReader(env);
  const text = r.string('AUTH_TOKENS', { hint: 'a JSON list of token grants' });
  r.done();
  const { grants, problems } = parseTokenGrants(text);
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `AUTH_TOKENS ${p}`));
  return { grants };
}

/** SYNC_TOKEN_KEYS: the keyring sealing brokerage tokens at rest (sync functions that touch tokens only). */
export function loadTokenKeyring(env: Env = process.env): Keyring {
  const r = new EnvReader(env);
  const text = r.string('SYNC_TOKEN_KEYS', { hint: '<id>:<base64 of 32 bytes>, newest first' });
  r.done();
  const { keyring, problems } = parseKeyring(text);
  if (!keyring) throw new ConfigError(problems.map((p) => `SYNC_TOKEN_KEYS ${p}`));
  return keyring;
}

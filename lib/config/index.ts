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
    service: r.string('SERVICE_NAME', {
      default: 'torrent-scan-sync',
      pattern: NAME,
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
    r.refuse(
      'NATS_USER',
      'and NATS_NKEY_SEED are both set: give user/password OR an nkey seed (with its JWT), not both',
    );
    return { servers, auth: { kind: 'none' } };
  }
  if (userPass) {
    const user = r.string('NATS_USER', { hint: 'set it with NATS_PASSWORD' });
    const password = r.string('NATS_PASSWORD', { hint: 'set it with NATS_USER' });
    return { servers, auth: { kind: 'user', user, password } };
  }
  if (!keyed) return { servers, auth: { kind: 'none' } };
  const seed = r.string('NATS_NKEY_SEED', {
    pattern: NKEY_USER_SEED,
    hint: 'a user nkey seed (SU…, 58 characters)',
    secret: true,
  });
  if (!r.has('NATS_JWT')) return { servers, auth: { kind: 'nkey', seed } };
  const jwt = r.string('NATS_JWT', {
    pattern: /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/,
    hint: 'a user JWT (three base64url parts)',
    secret: true,
  });
  return { servers, auth: { kind: 'jwt', jwt, seed } };
}

/** The torrent client the downloads domain drives (qBittorrent Web API v2). */
export interface TorrentClientConfig {
  url: string;
  auth: { kind: 'password'; username: string; password: string } | { kind: 'apiKey'; key: string };
  timeoutMs: number;
  /** Set on every torrent we add, and the only category the poll reads (TORRENT_CLIENT_CATEGORY). */
  category: string;
  /** TORRENT_ADOPT_ALL_CATEGORIES=true: the poll also adopts torrents outside our category (opt-in). */
  adoptAllCategories: boolean;
  /** What a cancel does to the torrent in the client (TORRENT_CANCEL_ACTION). */
  cancelAction: 'remove' | 'stop';
  /** TORRENT_CANCEL_DELETE_FILES=true: a removal also deletes the downloaded files. */
  cancelDeleteFiles: boolean;
  /** How long an active download's torrent may be missing from the client before it is set aside for review. */
  missingGraceMs: number;
  /** A sync/maindata rid older than this is dropped for a full update (the missing-torrent check runs on those). */
  fullResyncMs: number;
}

const CATEGORY = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/;

/** Whether any torrent-client setting is given (npm start then uses that client instead of its emulator). */
export function torrentClientConfigured(env: Env = process.env): boolean {
  const r = new EnvReader(env);
  return r.has('TORRENT_CLIENT_URL') && (r.has('TORRENT_CLIENT_PASSWORD') || r.has('TORRENT_CLIENT_API_KEY'));
}

// Loaded apart from Config: only the downloads functions need it, and a
// missing password must not take the healthcheck or the scan gateway down.
export function loadTorrentClientConfig(env: Env = process.env): TorrentClientConfig {
  const r = new EnvReader(env);
  const url = r.url('TORRENT_CLIENT_URL', ['http', 'https']);
  let auth: TorrentClientConfig['auth'];
  if (r.has('TORRENT_CLIENT_API_KEY')) {
    if (r.has('TORRENT_CLIENT_PASSWORD'))
      r.refuse(
        'TORRENT_CLIENT_API_KEY',
        'and TORRENT_CLIENT_PASSWORD are both set: give a password OR an API key, not both',
      );
    auth = {
      kind: 'apiKey',
      key: r.string('TORRENT_CLIENT_API_KEY', {
        pattern: /^qbt_[A-Za-z0-9_-]{8,200}$/,
        hint: 'a qBittorrent API key (qbt_…)',
        secret: true,
      }),
    };
  } else {
    auth = {
      kind: 'password',
      username: r.string('TORRENT_CLIENT_USERNAME', { default: 'admin' }),
      password: r.string('TORRENT_CLIENT_PASSWORD', { hint: 'or set TORRENT_CLIENT_API_KEY' }),
    };
  }
  const action = r.string('TORRENT_CANCEL_ACTION', {
    default: 'remove',
    pattern: /^(remove|stop)$/,
    hint: 'remove or stop',
  });
  const config: TorrentClientConfig = {
    url,
    auth,
    timeoutMs: r.int('TORRENT_CLIENT_TIMEOUT_MS', { default: 5000, min: 100, max: 60000 }),
    category: r.string('TORRENT_CLIENT_CATEGORY', {
      default: 'torrent-scan-sync',
      pattern: CATEGORY,
      hint: 'a category name of 1-64 letters, digits, spaces, . _ -',
    }),
    adoptAllCategories:
      r.string('TORRENT_ADOPT_ALL_CATEGORIES', {
        default: 'false',
        pattern: /^(true|false)$/,
        hint: 'true or false',
      }) === 'true',
    cancelAction: action as 'remove' | 'stop',
    cancelDeleteFiles:
      r.string('TORRENT_CANCEL_DELETE_FILES', {
        default: 'false',
        pattern: /^(true|false)$/,
        hint: 'true or false',
      }) === 'true',
    missingGraceMs: r.int('TORRENT_MISSING_GRACE_SECONDS', { default: 600, min: 0, max: 7 * 24 * 3600 }) * 1000,
    fullResyncMs: r.int('TORRENT_FULL_RESYNC_SECONDS', { default: 600, min: 0, max: 24 * 3600 }) * 1000,
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
  /** The shard tick the minute tick fans out to when its due set is too large ('' = walk the shards itself). */
  tickShardFunction: string;
  /** How long the attempt waits for a step before it counts as DEADLINE (15 min; shorter only in tests). */
  waitBoundMs: number;
  /** A step's own bound, below its Lambda timeout so its finish is always written. */
  stepTimeoutMs: number;
  /** Our egress IP addresses toward T-Bank: the per-address budget shared by every token is this many times limits.md's. */
  tbankEgressAddresses: number;
  /** T-Bank calls one hourly sync of a connection costs, for the tick's admissions per minute. */
  callsPerSync: number;
}

export function loadSyncConfig(env: Env = process.env): SyncConfig {
  const r = new EnvReader(env);
  const config: SyncConfig = {
    tbankUrl: r.url('TBANK_API_URL', ['http', 'https']),
    tbankAppName: r.string('TBANK_APP_NAME', {
      default: 'torrent-scan-sync',
      pattern: /^[A-Za-z0-9._-]{1,64}$/,
      hint: 'an application name',
    }),
    tbankRateWindowMs: r.int('TBANK_RATE_WINDOW_MS', { default: 60_000, min: 100, max: 60_000 }),
    historyDays: r.int('SYNC_HISTORY_DAYS', { default: 3 * 365, min: 1, max: 20 * 365 }),
    stepFunction: r.string('SYNC_STEP_FUNCTION', { pattern: /^[A-Za-z0-9_-]{1,140}$/, hint: 'a Lambda function name' }),
    tickShardFunction: r.string('SYNC_TICK_SHARD_FUNCTION', {
      default: '',
      pattern: /^[A-Za-z0-9_-]{0,140}$/,
      hint: 'a Lambda function name',
    }),
    waitBoundMs: r.int('WORK_WAIT_BOUND_MS', { default: 15 * 60 * 1000, min: 100, max: 24 * 60 * 60 * 1000 }),
    stepTimeoutMs: r.int('SYNC_STEP_TIMEOUT_MS', { default: 25_000, min: 100, max: 14 * 60 * 1000 }),
    tbankEgressAddresses: r.int('TBANK_EGRESS_ADDRESSES', { default: 1, min: 1, max: 1000 }),
    callsPerSync: r.int('SYNC_CALLS_PER_SYNC', { default: 25, min: 1, max: 10_000 }),
  };
  r.done();
  return config;
}

/** The scan gateway's settings (scan functions only; lib/scan/README.md). Durations are seconds, fractions allowed. */
export type HotFolderConfig =
  | { kind: 'local'; root: string }
  | {
      kind: 'smb';
      host: string;
      port?: number;
      share: string;
      /** A folder inside the share (`dir/sub`), the hot folder's root there; absent: the share's root. */
      dir?: string;
      /** Absent: a guest share (no login). */
      user?: string;
      password?: string;
    };

export interface ScanConfig {
  resultSubject: string;
  hotFolder: HotFolderConfig;
  dirs: { input: string; output: string; tmp: string };
  maxInflight: number;
  settleMs: number;
  timeoutMs: number;
  pollEveryMs: number;
  publishRetries: number;
  /** The poller's Lambda function, started by a request that finds none running ('' = the schedule alone polls). */
  pollFunction: string;
  normalizer: 'content-ai' | 'null';
  confidenceThreshold: number;
}

const DIR = /^[A-Za-z0-9][A-Za-z0-9 _-]{0,63}$/;

export function loadScanConfig(env: Env = process.env): ScanConfig {
  const r = new EnvReader(env);
  const normalizer = r.string('SCAN_NORMALIZER', {
    default: 'content-ai',
    pattern: /^(content-ai|null)$/,
    hint: 'content-ai or null',
  });
  const threshold = r.int('SCAN_CONFIDENCE_PERCENT', { default: 80, min: 0, max: 100 });
  const config: ScanConfig = {
    resultSubject: r.string('SCAN_RESULT_SUBJECT', {
      default: 'scan.results',
      pattern: /^[^\s.*>]+(\.[^\s.*>]+)*$/,
      hint: 'a NATS subject without wildcards',
    }),
    hotFolder: hotFolderConfig(r),
    dirs: hotFolderDirs(r),
    maxInflight: r.int('SCAN_MAX_INFLIGHT', { default: 4, min: 1, max: 1000 }),
    settleMs: r.seconds('SCAN_SETTLE_SECONDS', { default: 2, min: 0, max: 3600 }),
    timeoutMs: r.seconds('SCAN_TIMEOUT_SECONDS', { default: 300, min: 0.1, max: 86400 }),
    // The designed 5 s: a pass also wakes early when an answer lands or a settle window ends.
    pollEveryMs: r.seconds('SCAN_POLL_SECONDS', { default: 5, min: 0.05, max: 60 }),
    publishRetries: r.int('PUBLISH_RETRIES', { default: 3, min: 0, max: 10 }),
    pollFunction: r.string('SCAN_POLL_FUNCTION', {
      default: '',
      pattern: /^[A-Za-z0-9_-]{0,140}$/,
      hint: 'a Lambda function name',
    }),
    normalizer: normalizer as ScanConfig['normalizer'],
    confidenceThreshold: threshold / 100,
  };
  r.done();
  return config;
}

/** The folder names inside the hot folder (shared by the gateway and the scanner emulator). */
export function hotFolderDirs(r: EnvReader): ScanConfig['dirs'] {
  return {
    input: r.string('SCAN_INPUT_DIR', { default: 'Input', pattern: DIR, hint: 'a folder name' }),
    output: r.string('SCAN_OUTPUT_DIR', { default: 'Output', pattern: DIR, hint: 'a folder name' }),
    tmp: r.string('SCAN_TMP_DIR', { default: 'Tmp', pattern: DIR, hint: 'a folder name' }),
  };
}

const SMB_VARIABLES = ['SCAN_SMB_SHARE', 'SCAN_SMB_USER', 'SCAN_SMB_PASSWORD'];

/** `//host/share[/dir…]` or the UNC form `\\host\share[\dir…]`: a host, a share, and an optional folder inside it. */
const SMB_PATH = /^(?:\/\/|\\\\)([A-Za-z0-9.-]+)[/\\]([^/\\]+)((?:[/\\][^/\\]+)*)[/\\]?$/;

/**
 * A local folder (SCAN_HOTFOLDER_ROOT), or an SMB share when SCAN_SMB_SHARE is
 * set: the share path may name a folder inside the share (the hot folder's
 * root there); SCAN_SMB_USER with SCAN_SMB_PASSWORD, or neither for a guest share.
 */
function hotFolderConfig(r: EnvReader): HotFolderConfig {
  if (!r.has('SCAN_SMB_SHARE')) {
    for (const name of SMB_VARIABLES.filter((n) => r.has(n)))
      r.refuse(name, 'is set without SCAN_SMB_SHARE (the share it logs in to)');
    return { kind: 'local', root: r.string('SCAN_HOTFOLDER_ROOT', { pattern: /^\//, hint: 'an absolute path' }) };
  }
  const share = r.string('SCAN_SMB_SHARE', {
    pattern: SMB_PATH,
    hint: '//host/share[/folder…] or \\\\host\\share[\\folder…]',
  });
  const [, host = '', name = '', rest = ''] = SMB_PATH.exec(share) ?? [];
  const dir = rest.split(/[/\\]/).filter(Boolean);
  if (dir.some((segment) => segment === '.' || segment === '..' || /["\u0000-\u001f*?<>|:]/.test(segment)))
    r.refuse('SCAN_SMB_SHARE', 'has a folder part with `.`/`..` or a character a share path cannot hold');
  const port = r.int('SCAN_SMB_PORT', { default: 445, min: 1, max: 65535 });
  if (r.has('SCAN_SMB_PASSWORD') && !r.has('SCAN_SMB_USER'))
    r.refuse('SCAN_SMB_USER', 'is required with SCAN_SMB_PASSWORD (leave both unset for a guest share)');
  const login = r.has('SCAN_SMB_USER')
    ? { user: r.string('SCAN_SMB_USER'), password: r.string('SCAN_SMB_PASSWORD', { default: '', secret: true }) }
    : {};
  return { kind: 'smb', host, port, share: name, ...(dir.length ? { dir: dir.join('/') } : {}), ...login };
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

/** SESSION_KEYS: the keyring signing browser session cookies (the authorizer and the sign-in function only). */
export function loadSessionKeyring(env: Env = process.env): Keyring {
  const r = new EnvReader(env);
  const text = r.string('SESSION_KEYS', { hint: '<id>:<base64 of 32 bytes>, newest first', secret: true });
  r.done();
  const { keyring, problems } = parseKeyring(text);
  if (!keyring) throw new ConfigError(problems.map((p) => `SESSION_KEYS ${p}`));
  return keyring;
}

/** The Telegram bot and its notifications (telegram functions only). */
export interface TelegramConfig {
  /** False without a bot token: the notifier skips, the webhook answers 503. */
  enabled: boolean;
  token: string;
  /** A local Bot API server (the emulator); unset: Telegram's own. */
  apiRoot?: string;
  webhookSecret: string;
  /** Where notifications go; these chats may also press buttons and type commands. */
  chats: number[];
  /** Users served in any chat (e.g. private chats with the bot). */
  users: number[];
  table: string;
  /** Base URL of the web UI: messages link to <base>/review/{id} and <base>/download/{id}. */
  publicUiUrl: string;
  timeoutMs: number;
  sendAttempts: number;
  sendBoundMs: number;
  /** Telegram's send rates the notifier keeps (lib/telegram/pacer.ts); the stack speeds them up with its emulator. */
  pace: { chatGapMs: number; groupPerMinute: number; botPerSecond: number };
}

// Telegram's rule for secret_token: 1-256 of A-Za-z0-9_-.
const WEBHOOK_SECRET = /^[A-Za-z0-9_-]{16,256}$/;
const BOT_TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{20,100}$/;

export function loadTelegramConfig(env: Env = process.env): TelegramConfig {
  const r = new EnvReader(env);
  const enabled = r.has('TELEGRAM_BOT_TOKEN');
  const config: TelegramConfig = {
    enabled,
    token: enabled
      ? r.string('TELEGRAM_BOT_TOKEN', { pattern: BOT_TOKEN, hint: 'a bot token <digits>:<secret>', secret: true })
      : '',
    apiRoot: r.url('TELEGRAM_API_ROOT', ['http', 'https'], { optional: true }),
    webhookSecret: enabled
      ? r.string('TELEGRAM_WEBHOOK_SECRET', {
          pattern: WEBHOOK_SECRET,
          hint: '16-256 characters of A-Za-z0-9_-',
          secret: true,
        })
      : '',
    chats: idList(r, 'TELEGRAM_CHAT_IDS', env),
    users: idList(r, 'TELEGRAM_ALLOWED_USER_IDS', env),
    table: r.string('TABLE_TELEGRAM', { pattern: NAME, hint: 'a DynamoDB table name' }),
    publicUiUrl: r.url('PUBLIC_UI_URL', ['http', 'https'], { default: 'http://127.0.0.1:3000' }),
    timeoutMs: r.int('TELEGRAM_TIMEOUT_MS', { default: 5000, min: 500, max: 30000 }),
    sendAttempts: r.int('TELEGRAM_SEND_ATTEMPTS', { default: 6, min: 1, max: 20 }),
    sendBoundMs: r.int('TELEGRAM_SEND_BOUND_MS', { default: 45000, min: 1000, max: 600000 }),
    pace: {
      chatGapMs: r.int('TELEGRAM_CHAT_GAP_MS', { default: 1000, min: 0, max: 60000 }),
      groupPerMinute: r.int('TELEGRAM_GROUP_PER_MINUTE', { default: 20, min: 1, max: 100000 }),
      botPerSecond: r.int('TELEGRAM_BOT_PER_SECOND', { default: 30, min: 1, max: 1000 }),
    },
  };
  if (enabled && config.chats.length === 0)
    r.refuse('TELEGRAM_CHAT_IDS', 'is required with TELEGRAM_BOT_TOKEN (comma-separated chat ids)');
  r.done();
  return config;
}

function idList(r: EnvReader, name: string, env: Env): number[] {
  const text = env[name]?.trim();
  if (!text) return [];
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!items.every((s) => /^-?\d{1,16}$/.test(s))) {
    r.refuse(name, `must be comma-separated integer ids, got ${JSON.stringify(text)}`);
    return [];
  }
  return items.map(Number);
}

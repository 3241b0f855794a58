import { Env, EnvReader } from '../config/env';
import { ConfigError } from '../config/errors';
import { Keyring, parseKeyring } from '../secrets/sealer';
import { HOUR_MS } from './model';

/** The sync domain's settings, and how its brokerage tokens are sealed (sync functions only). */

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
  /** The sync "hour": a connection is due this long after its last attempt started (shortened only by soaks and tests). */
  hourMs: number;
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
    // Not below the tick's minute (nothing could be due sooner), not above a day.
    hourMs: r.int('SYNC_HOUR_MS', { default: HOUR_MS, min: 60_000, max: 24 * HOUR_MS }),
  };
  r.done();
  return config;
}

/**
 * How brokerage tokens are sealed at rest (sync functions that touch tokens only):
 * KMS when SYNC_TOKEN_KMS_KEY is set (the keyring, if given too, only opens the
 * values sealed before), else the SYNC_TOKEN_KEYS keyring. The one reader of
 * both variables: `env` may be the process's or one with secrets read at run time.
 */
export interface TokenSealing {
  /** KMS key ARNs or ids, newest first: the first seals, every one opens. Empty: no KMS. */
  kmsKeys: string[];
  keyring?: Keyring;
}

// A key ARN, alias ARN, key id (a UUID or mrk-…) or alias name (docs/sync.md#settings).
const KMS_KEY =
  /^(arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)\/[A-Za-z0-9/_-]+|(mrk-)?[0-9a-f-]{32,36}|alias\/[A-Za-z0-9/_-]+)$/;

export function loadTokenSealing(env: Env = process.env): TokenSealing {
  const r = new EnvReader(env);
  const kmsKeys = r.has('SYNC_TOKEN_KMS_KEY')
    ? r
        .string('SYNC_TOKEN_KMS_KEY')
        .split(',')
        .map((k) => k.trim())
    : [];
  for (const key of kmsKeys)
    if (!KMS_KEY.test(key))
      r.refuse('SYNC_TOKEN_KMS_KEY', `must be KMS key ARNs or ids, newest first; got ${JSON.stringify(key)}`);
  if (new Set(kmsKeys).size < kmsKeys.length) r.refuse('SYNC_TOKEN_KMS_KEY', 'names a key twice');
  const keyringText =
    kmsKeys.length > 0 && !r.has('SYNC_TOKEN_KEYS')
      ? undefined
      : r.string('SYNC_TOKEN_KEYS', {
          hint: '<id>:<base64 of 32 bytes>, newest first; or SYNC_TOKEN_KMS_KEY',
          secret: true,
        });
  r.done();
  if (keyringText === undefined) return { kmsKeys };
  const { keyring, problems } = parseKeyring(keyringText);
  if (!keyring) throw new ConfigError(problems.map((p) => `SYNC_TOKEN_KEYS ${p}`));
  return { kmsKeys, keyring };
}

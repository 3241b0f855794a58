import { Env, EnvReader } from '../config/env';

/**
 * The torrent client's settings, beside the client that takes them
 * (qbittorrent.ts `torrentClientFor`). Loaded apart from the shared Config:
 * only the downloads functions and `npm start` need them.
 */

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

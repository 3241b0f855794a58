import { Clock, isoTime, systemClock } from '../clock';
import type { TorrentClientConfig } from './config';
import type { Logger } from '../log';
import type { TorrentClient } from './client';
import {
  TorrentAddRefusedError,
  TorrentClientAnswerError,
  TorrentClientAuthError,
  TorrentClientError,
  TorrentClientVersionError,
} from './errors';
import { credentialsFingerprint, LoginGate, LoginGateStore, MemoryLoginGateStore } from './login-gate';
import type { AddOptions, TorrentInfo, TorrentSnapshot } from './model';

/**
 * qBittorrent Web API v2 client for every version users run (4.x, 5.0/5.1, 5.2+):
 * - login answers `Ok.`/`Fails.` (up to 5.1) or 204/401 (5.2+); whatever
 *   cookies the server sets (`SID`, `QBT_SID_<port>`) are sent back as set;
 * - or an API key (`Authorization: Bearer qbt_…`, WebAPI 2.14.1+), no login;
 * - a 401 or 403 renews the session once; every login passes the login gate
 *   (login-gate.ts): a refused login closes it for 31 min and longer, so the
 *   client's ban (5 refusals) is never reached by our polls;
 * - a base URL with a path (a reverse proxy at `/qbt/`) keeps it on every call;
 * - `app/webapiVersion` is read once per instance (= per Lambda container),
 *   logged, and a version older than MIN_WEBAPI is refused by every call;
 * - `torrents/add` answers `Ok.`/`Fails.` (up to 5.1) or 5.2's 200 + JSON;
 *   `Fails.` and 5.2's 409 mean "nothing added" (a duplicate OR a failure):
 *   the torrent is looked up, present counts as added, absent is a refusal;
 * - the poll reads `sync/maindata` with the instance's last `rid` (changes
 *   only; a full update when the rid is stale, or every fullResyncMs), or
 *   `torrents/info` when the server has no maindata.
 * Every call is bounded by timeoutMs. Torrents are scoped to `category`
 * (set on add, filtered on read) unless allCategories.
 */

export const MIN_WEBAPI = '2.8.3';
export const DEFAULT_CATEGORY = 'torrent-scan-sync';
/** WebAPI 2.11.0 (qBittorrent 5.0) renamed pause → stop. */
const STOP_SINCE = '2.11.0';

export type TorrentClientAuth =
  { kind: 'password'; username: string; password: string } | { kind: 'apiKey'; key: string };

export interface QBittorrentOptions {
  baseUrl: string;
  auth: TorrentClientAuth;
  category?: string;
  /** Read (and so adopt) torrents of every category, not only ours. */
  allCategories?: boolean;
  timeoutMs?: number;
  /** A maindata rid older than this is dropped for a full update (missing-torrent checks need one now and then). */
  fullResyncMs?: number;
  fetch?: typeof fetch;
  log?: Logger;
  now?: Clock;
  /** Where refused logins are recorded; shared by every container in production (DynamoLoginGateStore). */
  loginGate?: LoginGateStore;
}

export class QBittorrentClient implements TorrentClient {
  private session?: Promise<string>;
  private version?: Promise<string>;
  private readonly fetch: typeof fetch;
  private readonly category: string;
  private readonly now: Clock;
  // sync/maindata state of this container: the last rid and the torrents it describes.
  private rid = 0;
  private lastFull = 0;
  private known = new Map<string, TorrentInfo>();
  private maindata = true;
  private readonly base: URL;
  private readonly gate?: LoginGate;

  constructor(private readonly options: QBittorrentOptions) {
    this.fetch = options.fetch ?? fetch;
    this.category = options.category ?? DEFAULT_CATEGORY;
    this.now = options.now ?? systemClock;
    // The path is the client's (a reverse proxy at /qbt/): calls are resolved under it, never from the origin.
    this.base = new URL(options.baseUrl);
    if (!this.base.pathname.endsWith('/')) this.base.pathname += '/';
    const auth = options.auth;
    if (auth.kind === 'password')
      this.gate = new LoginGate(
        options.loginGate ?? new MemoryLoginGateStore(),
        () => credentialsFingerprint(this.base.href, auth.username, auth.password),
        this.now,
      );
  }

  /** The server's Web API version (read once), refused when older than MIN_WEBAPI. */
  webapiVersion(): Promise<string> {
    this.version ??= (async () => {
      const res = await this.call('GET', '/api/v2/app/webapiVersion', undefined, { checkVersion: false });
      const found = (await res.text()).trim();
      if (!/^\d+\.\d+(\.\d+)?$/.test(found))
        throw new TorrentClientAnswerError(`app/webapiVersion answered ${JSON.stringify(found.slice(0, 40))}`);
      this.options.log?.info('torrent_client_version', { webapi: found });
      if (compareVersions(found, MIN_WEBAPI) < 0) throw new TorrentClientVersionError(found, MIN_WEBAPI);
      return found;
    })();
    this.version.catch(() => (this.version = undefined));
    return this.version;
  }

  async snapshot(): Promise<TorrentSnapshot> {
    if (this.maindata) {
      try {
        return await this.syncMaindata();
      } catch (err) {
        // Whatever went wrong, the next call starts over from a full update.
        this.rid = 0;
        if (!(err instanceof TorrentClientError && err.upstreamStatus === 404)) throw err;
        this.maindata = false;
        this.options.log?.info('torrent_client_no_maindata', {});
      }
    }
    const query = this.options.allCategories ? '' : `?category=${encodeURIComponent(this.category)}`;
    const body = await this.json('GET', `/api/v2/torrents/info${query}`);
    if (!Array.isArray(body)) throw new TorrentClientAnswerError('torrents/info did not answer a list');
    const present = body.flatMap((raw) => (isObject(raw) ? [readTorrent(raw)] : []));
    // No rid here: diff against this container's previous list, so the poll's own
    // work still follows the changes (only the transfer grows with the torrent count).
    const full = this.rid === 0 || this.now() - this.lastFull >= (this.options.fullResyncMs ?? 10 * 60_000);
    const changed = full ? present : present.filter((t) => !sameTorrent(this.known.get(t.hash), t));
    this.known = new Map(present.map((t) => [t.hash, t]));
    this.rid = 1;
    if (full) this.lastFull = this.now();
    return { full, changed, present };
  }

  private async syncMaindata(): Promise<TorrentSnapshot> {
    if (this.rid !== 0 && this.now() - this.lastFull >= (this.options.fullResyncMs ?? 10 * 60_000)) this.rid = 0;
    const body = await this.json('GET', `/api/v2/sync/maindata?rid=${this.rid}`);
    if (!isObject(body) || typeof body.rid !== 'number')
      throw new TorrentClientAnswerError('sync/maindata did not answer an object with a rid');
    const full = body.full_update === true || this.rid === 0;
    const next = full ? new Map<string, TorrentInfo>() : new Map(this.known);
    const changedIds: string[] = [];
    const torrents = isObject(body.torrents) ? body.torrents : {};
    for (const [id, partial] of Object.entries(torrents)) {
      if (!isObject(partial)) continue;
      // Changed fields only: merge them onto what we knew of this id.
      next.set(id, readTorrent({ ...(next.get(id) ?? { hash: id }), ...partial, hash: id }));
      changedIds.push(id);
    }
    if (Array.isArray(body.torrents_removed))
      for (const id of body.torrents_removed) if (typeof id === 'string') next.delete(id);
    this.known = next;
    this.rid = body.rid;
    if (full) this.lastFull = this.now();
    const inScope = (t: TorrentInfo) => this.options.allCategories || t.category === this.category;
    const present = [...next.values()].filter(inScope);
    const changed = full
      ? present
      : changedIds.flatMap((id) => (next.has(id) && inScope(next.get(id)!) ? [next.get(id)!] : []));
    return { full, changed, present };
  }

  async add(magnet: string, options: AddOptions = {}): Promise<void> {
    // qBittorrent splits `urls` on line breaks: one magnet must stay one URL (decision 290; the domain rebuilds it).
    if (!/^magnet:\?[^\u0000-\u001f\u007f-\u009f]*$/i.test(magnet))
      throw new TorrentAddRefusedError('only a magnet without control characters is sent');
    const form = new URLSearchParams({ urls: magnet, category: this.category });
    if (options.tags?.length) form.set('tags', options.tags.join(','));
    const res = await this.call('POST', '/api/v2/torrents/add', form, { allow: [400, 409, 415] });
    const text = (await this.readText(res, '/api/v2/torrents/add')).trim();
    if (res.status === 200 && text === 'Ok.') return;
    if (res.ok && text.startsWith('{')) {
      // 5.2+: 200 {added_torrent_ids, success_count, pending_count, failure_count}; a magnet may be pending.
      const body = parseJson(text, 'torrents/add');
      const count = (k: string) => (isObject(body) && typeof body[k] === 'number' ? body[k] : 0);
      if (count('success_count') + count('pending_count') > 0) return;
    }
    // `Fails.` (up to 5.1) and 409 (5.2+) mean nothing was added: a duplicate OR any failure. Only the
    // torrent being in the client makes it "added"; taking 409 as "present" recorded refused torrents as added.
    if (await this.present(magnet)) return;
    throw new TorrentAddRefusedError(text.slice(0, 200) || String(res.status), res.status);
  }

  async remove(hashes: string[], options: { deleteFiles?: boolean } = {}): Promise<void> {
    if (hashes.length === 0) return;
    await this.call(
      'POST',
      '/api/v2/torrents/delete',
      new URLSearchParams({ hashes: hashes.join('|'), deleteFiles: String(options.deleteFiles ?? false) }),
    );
  }

  async stop(hashes: string[]): Promise<void> {
    if (hashes.length === 0) return;
    const path =
      compareVersions(await this.webapiVersion(), STOP_SINCE) >= 0 ? '/api/v2/torrents/stop' : '/api/v2/torrents/pause';
    await this.call('POST', path, new URLSearchParams({ hashes: hashes.join('|') }));
  }

  /** Whether a torrent holding any hash of the magnet is in the client (any category). */
  private async present(magnet: string): Promise<boolean> {
    const hashes = magnetIds(magnet);
    if (hashes.length === 0) return false;
    const matches = (body: unknown) =>
      Array.isArray(body) &&
      body.some((raw) => {
        if (!isObject(raw)) return false;
        const t = readTorrent(raw);
        return [t.hash, t.infohash_v1, t.infohash_v2].some(
          (h) => h && (hashes.includes(h) || hashes.includes(h.slice(0, 40))),
        );
      });
    if (matches(await this.json('GET', `/api/v2/torrents/info?hashes=${hashes.join('|')}`))) return true;
    // A hybrid's id becomes its truncated v2 once its metadata arrived: a v1-only magnet finds it only by its
    // infohash fields, so this rare path (a `Fails.` answer) reads the whole list once.
    return matches(await this.json('GET', '/api/v2/torrents/info'));
  }

  private async json(method: string, path: string): Promise<unknown> {
    const res = await this.call(method, path);
    return parseJson(await this.readText(res, path), path);
  }

  private async readText(res: Response, path: string): Promise<string> {
    try {
      return await res.text();
    } catch (err) {
      throw new TorrentClientError(
        `${path}: the answer broke off: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }

  private async call(
    method: string,
    path: string,
    form?: URLSearchParams,
    opts: { allow?: number[]; checkVersion?: boolean; renewed?: boolean } = {},
  ): Promise<Response> {
    if (opts.checkVersion !== false) await this.webapiVersion();
    const headers: Record<string, string> =
      this.options.auth.kind === 'apiKey'
        ? { authorization: `Bearer ${this.options.auth.key}` }
        : { cookie: await this.login() };
    const res = await this.request(method, path, form, headers);
    if ((res.status === 401 || res.status === 403) && !opts.renewed && this.options.auth.kind === 'password') {
      await res.body?.cancel();
      this.session = undefined;
      return this.call(method, path, form, { ...opts, renewed: true });
    }
    if (res.status === 401 || res.status === 403)
      throw new TorrentClientAuthError(`${method} ${path} answered ${res.status}: not authorised`, res.status);
    if (!res.ok && !opts.allow?.includes(res.status))
      throw new TorrentClientError(`${method} ${path} answered ${res.status}`, res.status);
    return res;
  }

  /** The `Cookie` header to send: every cookie the login set, whatever its name. */
  private login(): Promise<string> {
    const auth = this.options.auth;
    if (auth.kind !== 'password' || !this.gate) return Promise.resolve('');
    const gate = this.gate;
    this.session ??= (async () => {
      // Closed gate: fail now, with no call to the client (every call would add to its refusal count).
      const { recorded } = await gate.permit();
      const form = new URLSearchParams({ username: auth.username, password: auth.password });
      const res = await this.request('POST', '/api/v2/auth/login', form, {});
      const text = (await this.readText(res, '/api/v2/auth/login')).trim();
      if (res.status === 401 || (res.status === 200 && text === 'Fails.')) {
        const next = isoTime(await gate.refused());
        this.options.log?.warn('torrent_client_login_refused', { status: res.status, next_try_at: next });
        throw new TorrentClientAuthError(
          res.status === 401
            ? // Up to 5.1 a wrong password is `Fails.`: a 401 is the Host/Referer/Origin check (a reverse proxy
              // that rewrites Host, or a URL other than the one the WebUI expects). 5.2+ also answers 401 to a wrong password.
              `login refused (401): the client refused our Host/Referer/Origin (a reverse proxy must forward Host; check TORRENT_CLIENT_URL) or, on qBittorrent 5.2+, the username or password; credentials refused, next try at ${next}`
            : `login refused: wrong username or password; credentials refused, next try at ${next}`,
          res.status,
        );
      }
      if (res.status === 403) {
        const next = isoTime(await gate.banned());
        this.options.log?.warn('torrent_client_login_banned', { next_try_at: next });
        throw new TorrentClientAuthError(
          `login refused: this address is banned by the client (too many failed logins); next try at ${next}`,
          403,
        );
      }
      if (!(res.status === 204 || (res.status === 200 && text === 'Ok.')))
        throw new TorrentClientError(`login answered ${res.status}`, res.status);
      const cookies = res.headers
        .getSetCookie()
        .map((c) => c.split(';')[0].trim())
        .filter((c) => c.includes('='));
      if (cookies.length === 0) throw new TorrentClientError('login succeeded but set no session cookie', res.status);
      await gate.accepted(recorded);
      return cookies.join('; ');
    })();
    this.session.catch(() => (this.session = undefined));
    return this.session;
  }

  /** `/api/v2/…` under the base URL's path (`http://nas/qbt/` → `http://nas/qbt/api/v2/…`). */
  endpoint(path: string): URL {
    return new URL(path.replace(/^\/+/, ''), this.base);
  }

  private async request(
    method: string,
    path: string,
    form: URLSearchParams | undefined,
    headers: Record<string, string>,
    retried = false,
  ): Promise<Response> {
    try {
      return await this.fetch(this.endpoint(path), {
        method,
        headers: {
          ...headers,
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
          referer: this.base.href,
        },
        body: form?.toString(),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 5000),
      });
    } catch (err) {
      // A kept-alive connection the server closed while this process could not run its timers (a Lambda
      // container frozen between invocations, a held event loop): qBittorrent closes an idle connection after
      // 7 to 9 s and says nothing of it in its headers, and undici, whose own 4 s idle timer did not fire, sends
      // the next request on the dead socket ("other side closed"; decision 167). A GET changes nothing, so it is
      // tried once more on a new connection; a POST may have landed and is not. A timeout is not retried.
      if (method === 'GET' && !retried && connectionDropped(err))
        return this.request(method, path, form, headers, true);
      throw new TorrentClientError(
        `${method} ${path} failed: ${err instanceof Error ? `${err.message}${causeOf(err)}` : String(err)}`,
      );
    }
  }
}

function connectionDropped(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } })?.cause?.code;
  return err instanceof TypeError && (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE');
}

function causeOf(err: Error): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? `: ${cause.message}` : '';
}

/** The client the settings describe (./config.ts loadTorrentClientConfig). */
export function torrentClientFor(
  cfg: TorrentClientConfig,
  log?: Logger,
  fetchImpl?: typeof fetch,
  loginGate?: LoginGateStore,
): QBittorrentClient {
  return new QBittorrentClient({
    baseUrl: cfg.url,
    auth: cfg.auth,
    category: cfg.category,
    allCategories: cfg.adoptAllCategories,
    timeoutMs: cfg.timeoutMs,
    fullResyncMs: cfg.fullResyncMs,
    log,
    fetch: fetchImpl,
    loginGate,
  });
}

/**
 * Only the named fields, each of its type or absent: nothing else a client
 * answers (PK, SK, __proto__, …) travels further.
 */
export function readTorrent(raw: Record<string, unknown>): TorrentInfo {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  return {
    hash: (str(raw.hash) ?? '').toLowerCase(),
    ...(raw.infohash_v1 !== undefined ? { infohash_v1: (str(raw.infohash_v1) ?? '').toLowerCase() } : {}),
    ...(raw.infohash_v2 !== undefined ? { infohash_v2: (str(raw.infohash_v2) ?? '').toLowerCase() } : {}),
    name: str(raw.name) ?? '',
    state: str(raw.state) ?? '',
    progress: num(raw.progress) ?? NaN,
    added_on: num(raw.added_on) ?? 0,
    category: str(raw.category) ?? '',
    tags: str(raw.tags) ?? '',
  };
}

function sameTorrent(a: TorrentInfo | undefined, b: TorrentInfo): boolean {
  return (
    a !== undefined &&
    (Object.keys(b) as Array<keyof TorrentInfo>).every(
      (k) => a[k] === b[k] || (Number.isNaN(a[k]) && Number.isNaN(b[k])),
    )
  );
}

function parseJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const kind = /^\s*</.test(text) ? 'HTML' : 'malformed or truncated JSON';
    throw new TorrentClientAnswerError(`${path} answered ${kind}, not JSON: ${JSON.stringify(text.slice(0, 80))}`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The ids a torrent of this magnet may have in the client: its v1 hash, its v2 hash truncated to 40 hex. */
function magnetIds(magnet: string): string[] {
  const ids: string[] = [];
  for (const xt of new URLSearchParams(magnet.replace(/^magnet:\?/, '')).getAll('xt')) {
    const v1 = /^urn:btih:([0-9a-f]{40})$/i.exec(xt)?.[1];
    const v2 = /^urn:btmh:1220([0-9a-f]{64})$/i.exec(xt)?.[1];
    if (v1) ids.push(v1.toLowerCase());
    if (v2) ids.push(v2.slice(0, 40).toLowerCase());
  }
  return ids;
}

export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

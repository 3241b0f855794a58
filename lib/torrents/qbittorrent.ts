import { Clock, systemClock } from '../clock';
import type { TorrentClientConfig } from './config';
import type { Logger } from '../log';
import type { TorrentClient } from './client';
import {
  TorrentAddRefusedError,
  TorrentClientAnswerError,
  TorrentClientError,
  TorrentClientVersionError,
} from './errors';
import type { LoginGateStore } from './login-gate';
import { type AddOptions, inCategoryTree, type TorrentCategory, type TorrentSnapshot } from './model';
import { compareVersions, isObject, magnetIds, parseJson, readTorrent } from './qbittorrent-answers';
import { QbittorrentSession, TorrentClientAuth } from './qbittorrent-session';
import { TorrentView } from './qbittorrent-snapshot';

export { compareVersions, readTorrent } from './qbittorrent-answers';
export type { TorrentClientAuth } from './qbittorrent-session';

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
 * Every call is bounded by timeoutMs. Torrents are scoped to `category` and its
 * sub-categories `category/…` (set on add, filtered on read, here: qBittorrent's own
 * filter includes sub-categories only when they are enabled) unless allCategories.
 * Here: the endpoints; the session and transport are qbittorrent-session.ts,
 * the poll's state qbittorrent-snapshot.ts, answers read by qbittorrent-answers.ts.
 */

export const MIN_WEBAPI = '2.8.3';
export const DEFAULT_CATEGORY = 'torrent-scan-sync';
/** WebAPI 2.11.0 (qBittorrent 5.0) renamed pause → stop and resume → start. */
const STOP_SINCE = '2.11.0';

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
  private version?: Promise<string>;
  readonly category: string;
  private readonly http: QbittorrentSession;
  // sync/maindata state of this container: the last rid and the torrents it describes.
  private readonly view: TorrentView;
  private maindata = true;

  constructor(private readonly options: QBittorrentOptions) {
    this.category = options.category ?? DEFAULT_CATEGORY;
    const now = options.now ?? systemClock;
    this.http = new QbittorrentSession({ ...options, now, ready: () => this.webapiVersion() });
    this.view = new TorrentView(
      now,
      options.fullResyncMs ?? 10 * 60_000,
      (t) => !!options.allCategories || inCategoryTree(this.category, t.category),
    );
  }

  /** The server's Web API version (read once), refused when older than MIN_WEBAPI. */
  webapiVersion(): Promise<string> {
    this.version ??= (async () => {
      const res = await this.http.call('GET', '/api/v2/app/webapiVersion', undefined, { checkVersion: false });
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
        return this.view.fromMaindata(await this.json('GET', `/api/v2/sync/maindata?rid=${this.view.nextRid()}`));
      } catch (err) {
        // Whatever went wrong, the next call starts over from a full update.
        this.view.rid = 0;
        if (!(err instanceof TorrentClientError && err.upstreamStatus === 404)) throw err;
        this.maindata = false;
        this.options.log?.info('torrent_client_no_maindata', {});
      }
    }
    // No `category=` filter: qBittorrent's includes sub-categories only when they are enabled in its settings
    // (TorrentImpl::belongsToCategory), so the tree is filtered here, as maindata's torrents are.
    const body = await this.json('GET', '/api/v2/torrents/info');
    if (!Array.isArray(body)) throw new TorrentClientAnswerError('torrents/info did not answer a list');
    return this.view.fromList(body.flatMap((raw) => (isObject(raw) ? [readTorrent(raw)] : [])));
  }

  async add(magnet: string, options: AddOptions = {}): Promise<void> {
    // qBittorrent splits `urls` on line breaks: one magnet must stay one URL (decision 290; the domain rebuilds it).
    if (!/^magnet:\?[^\u0000-\u001f\u007f-\u009f]*$/i.test(magnet))
      throw new TorrentAddRefusedError('only a magnet without control characters is sent');
    const res = await this.http.call('POST', '/api/v2/torrents/add', this.addForm(magnet, options), {
      allow: [400, 409, 415],
    });
    const text = (await this.http.readText(res, '/api/v2/torrents/add')).trim();
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

  /**
   * The form of torrents/add: `urls` for a magnet; for a .torrent, multipart with the file in a `torrents` part
   * (TorrentsController::addAction reads every uploaded file; a file it cannot load answers 415).
   */
  private addForm(magnet: string, options: AddOptions): URLSearchParams | FormData {
    const fields: Array<[string, string]> = [['category', options.category ?? this.category]];
    // A sub-category's save path applies only to a torrent in automatic management (SessionImpl::addTorrent_impl):
    // the default category keeps the client's default mode, as before categories could be chosen.
    if (options.category && options.category !== this.category) fields.push(['autoTMM', 'true']);
    if (options.tags?.length) fields.push(['tags', options.tags.join(',')]);
    if (options.ratioLimit !== undefined) fields.push(['ratioLimit', String(options.ratioLimit)]);
    if (options.seedingTimeLimit !== undefined) fields.push(['seedingTimeLimit', String(options.seedingTimeLimit)]);
    if (!options.torrentFile) return new URLSearchParams([['urls', magnet], ...fields]);
    if (options.rename) fields.push(['rename', options.rename]);
    const form = new FormData();
    form.append(
      'torrents',
      new Blob([new Uint8Array(options.torrentFile)], { type: 'application/x-bittorrent' }),
      'download.torrent',
    );
    for (const [k, v] of fields) form.append(k, v);
    return form;
  }

  async remove(hashes: string[], options: { deleteFiles?: boolean } = {}): Promise<void> {
    if (hashes.length === 0) return;
    await this.http.call(
      'POST',
      '/api/v2/torrents/delete',
      new URLSearchParams({ hashes: hashes.join('|'), deleteFiles: String(options.deleteFiles ?? false) }),
    );
  }

  async removeOwn(hashes: string[], options: { deleteFiles: boolean }): Promise<string[]> {
    if (hashes.length === 0) return [];
    const ids = hashes.map((h) => h.toLowerCase());
    const body = await this.json(
      'GET',
      `/api/v2/torrents/info?category=${encodeURIComponent(this.category)}&hashes=${ids.join('|')}`,
    );
    // The filter is the server's; the check is ours too: a server that ignored it never makes us delete another's.
    const own = (Array.isArray(body) ? body : [])
      .flatMap((raw) => (isObject(raw) ? [readTorrent(raw)] : []))
      .filter((t) => t.category === this.category && ids.includes(t.hash))
      .map((t) => t.hash);
    if (own.length) await this.remove(own, options);
    return own;
  }

  async setShareLimits(hashes: string[], limits: { ratioLimit?: number; seedingTimeLimit?: number }): Promise<void> {
    if (hashes.length === 0) return;
    // -2: the global limit. 4.6+ (WebAPI 2.9.3) requires inactiveSeedingTimeLimit too, and refuses the call
    // without it (400); 4.5 ignores a field it does not know, so it is sent to every version.
    await this.http.call(
      'POST',
      '/api/v2/torrents/setShareLimits',
      new URLSearchParams({
        hashes: hashes.join('|'),
        ratioLimit: String(limits.ratioLimit ?? -2),
        seedingTimeLimit: String(limits.seedingTimeLimit ?? -2),
        inactiveSeedingTimeLimit: '-2',
      }),
    );
  }

  async stop(hashes: string[]): Promise<void> {
    if (hashes.length === 0) return;
    const path =
      compareVersions(await this.webapiVersion(), STOP_SINCE) >= 0 ? '/api/v2/torrents/stop' : '/api/v2/torrents/pause';
    await this.http.call('POST', path, new URLSearchParams({ hashes: hashes.join('|') }));
  }

  async start(hashes: string[]): Promise<void> {
    if (hashes.length === 0) return;
    const path =
      compareVersions(await this.webapiVersion(), STOP_SINCE) >= 0
        ? '/api/v2/torrents/start'
        : '/api/v2/torrents/resume';
    await this.http.call('POST', path, new URLSearchParams({ hashes: hashes.join('|') }));
  }

  async categories(): Promise<Map<string, TorrentCategory>> {
    const body = await this.json('GET', '/api/v2/torrents/categories');
    if (!isObject(body)) throw new TorrentClientAnswerError('torrents/categories did not answer an object');
    const out = new Map<string, TorrentCategory>();
    // {name: {name, savePath, download_path?}} (TorrentsController::categoriesAction); keys are the client's data.
    for (const [key, raw] of Object.entries(body)) {
      if (!isObject(raw)) continue;
      const name = typeof raw.name === 'string' ? raw.name : key;
      out.set(name, { name, savePath: typeof raw.savePath === 'string' ? raw.savePath : '' });
    }
    return out;
  }

  async createCategory(name: string, savePath: string): Promise<boolean> {
    // 409 is both "Unable to create category" (it exists) and "Incorrect category name"; names reaching here
    // passed category.ts, which is stricter than Session::isValidCategoryName, so a 409 means it exists.
    const res = await this.http.call(
      'POST',
      '/api/v2/torrents/createCategory',
      new URLSearchParams({ category: name, savePath }),
      { allow: [409] },
    );
    await this.http.readText(res, '/api/v2/torrents/createCategory');
    return res.status !== 409;
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
    const res = await this.http.call(method, path);
    return parseJson(await this.http.readText(res, path), path);
  }
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

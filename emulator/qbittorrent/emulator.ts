import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBodyBytes } from '../http';
import { parseMagnet } from '../../lib/downloads/magnet';
import { parseTorrentFile } from '../../lib/downloads/torrent-file';
import { EmulatorAuth, Send } from './auth';
import { CategoryTable } from './categories';
import { control, Faults } from './control';
import { Profile, PROFILES, serialised, stateName, TRAITS } from './profiles';
import { gate, type UploadedFile } from './gate';
import { EmulatedTorrent, NewTorrent, TorrentTable } from './torrents';
import { passThrough, Upstream } from './upstream';

export { PROFILES } from './profiles';
export type { Profile } from './profiles';
export type { EmulatedTorrent, NewTorrent, TorrentKind } from './torrents';

/**
 * A qBittorrent Web API v2 emulator with one profile per behaviour family
 * users run: `4.6`, `5.1` and `5.2` (profiles.ts). Routes: auth/login,
 * app/webapiVersion, app/version, torrents/info (filters category, with sub-categories when enabled, tag,
 * hashes), torrents/add, torrents/delete (deleteFiles required), torrents/categories,
 * torrents/createCategory (categories.ts),
 * torrents/stop|pause, torrents/start|resume, sync/maindata (per session: sync.ts). The checks before
 * an action (401 CSRF/Host on every call, 403 without a session, 404, 405) are
 * gate.ts. Control API under /emulator (control.ts):
 *
 *   GET    /emulator/torrents
 *   POST   /emulator/torrents                {kind: v1|v2|hybrid|legacy, name?, state?, progress?, category?, tags?, metadata?: false}
 *   PATCH  /emulator/torrents/<hash>         {state?, progress?, name?, category?, ratio?, seeding_time?, uploaded?}
 *   POST   /emulator/torrents/<hash>/metadata {infohash_v2?}  metadata arrives: a hybrid's `hash` becomes its TRUNCATED v2
 *   DELETE /emulator/torrents[/<hash>]       remove all / one
 *   GET    /emulator/categories              {subcategories, default_save_path, categories: {name: savePath}}
 *   PUT    /emulator/categories              {subcategories?, default_save_path?}  (Session\\SubcategoriesEnabled)
 *   PUT    /emulator/disk                    {free_space_on_disk}  what server_state reports (default 1 TiB)
 *   PUT    /emulator/faults                  {add: ok|fail, info: ok|html|truncated|500|hang, add_delay_ms}
 *   PUT    /emulator/profile                 {profile: 4.6|5.1|5.2}
 *   GET    /emulator/auth                    {failed_logins, banned_until} per address
 *   PUT    /emulator/auth                    {max_fail_count?, ban_duration_ms?, reverse_proxy?}; DELETE lifts every ban
 *   POST   /emulator/restart                 {checking_ms?}  the client restarts: sessions lost, every torrent
 *                                            `checkingResumeData` with progress 0 for checking_ms (default 1000)
 *   PUT    /emulator/upstream                {url, username, password}: pass /api/v2/* through to a REAL
 *                                            qBittorrent (the real-client tests); DELETE ends it
 *
 * What real qBittorrent does that this emulator reproduces (docs/downloads.md; each file
 * cites the qBittorrent source it follows, test/unit/torrents/qbittorrent-conformance.test.ts
 * checks the answers against it):
 * - MaxAuthenticationFailCount (5) refused logins ban the caller's address for
 *   BanDuration (1 h): login answers 403; the count resets only on a success
 *   or when the ban ends;
 * - 5.2's torrents/add: 200 + JSON on success (202 only while a URL is fetched);
 *   409 `Conflict` when nothing was added, a duplicate OR a failure;
 * - after a restart a finished torrent reports `checkingResumeData`, progress 0;
 * - a hybrid added by a btih-only magnet has `hash` = v1 until its metadata
 *   arrives, then the truncated v2 (POST …/metadata);
 * - a call whose Origin/Referer names another host than Host, or whose Host names
 *   another port, is 401 (CSRF and Host checks), login or not.
 */

export type { InfoFault } from './control';

export interface EmulatorOptions {
  username: string;
  password: string;
  profile?: Profile;
  /** 5.2 only: a key accepted as `Authorization: Bearer <key>`. */
  apiKey?: string;
}

export class QbittorrentEmulator {
  private readonly table = new TorrentTable((state) => stateName(this.profile, state));
  readonly faults: Faults = { add: 'ok', info: 'ok', add_delay_ms: 0 };
  /** Kept across restarts and profile changes, as qBittorrent keeps categories.json. */
  readonly categories = new CategoryTable();
  profile: Profile;
  /** Calls per route, for tests and the bench (poll cost). */
  readonly calls = new Map<string, number>();
  bytesOut = 0;
  /** Every torrents/delete of a torrent, in order: what a test asks "removed once, with its files?". */
  readonly deletions: Array<{ hash: string; deleteFiles: boolean }> = [];
  readonly authState: EmulatorAuth;
  /** MaxAuthenticationFailCount and BanDuration. */
  readonly auth: { max_fail_count: number; ban_duration_ms: number; reverse_proxy: boolean };
  upstream?: Upstream;
  private port = 0;
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  constructor(private readonly options: EmulatorOptions) {
    this.profile = options.profile ?? '5.1';
    this.authState = new EmulatorAuth(
      options,
      () => this.profile,
      () => this.port,
    );
    this.auth = this.authState.settings;
  }

  get traits() {
    return TRAITS[this.profile];
  }

  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, host, resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return `http://${host}:${this.port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  setProfile(profile: Profile): void {
    if (!PROFILES.includes(profile)) throw new Error(`profile must be one of ${PROFILES.join(', ')}`);
    this.profile = profile;
    this.authState.sessions.clear();
    // State names differ between profiles: rename what is there.
    for (const t of this.table.tracked.values())
      this.update(t.torrent.hash, { state: stateName(profile, t.torrent.state) });
  }

  /** Every torrent as torrents/info would answer it. */
  get torrents(): Map<string, EmulatedTorrent> {
    return new Map([...this.table.tracked].map(([id, t]) => [id, t.torrent]));
  }

  addTorrent(spec: NewTorrent): EmulatedTorrent {
    return this.table.add(spec);
  }

  /** Changes fields of a torrent, recorded for maindata. */
  update(hash: string, patch: Partial<EmulatedTorrent>): EmulatedTorrent | undefined {
    return this.table.update(hash, patch);
  }

  /** Metadata arrives: a hybrid reveals its v2 hash, and its id becomes the v2 hash truncated to 40 hex. */
  metadataArrives(hash: string, infohashV2?: string): EmulatedTorrent | undefined {
    return this.table.metadataArrives(hash, infohashV2);
  }

  /** What server_state.free_space_on_disk says from now on (maindata sends the change in the next delta). */
  setFreeSpace(bytes: number): void {
    this.table.setFreeSpace(bytes);
  }

  remove(hash: string): boolean {
    return this.table.remove(hash);
  }

  clear(): void {
    this.table.clear();
  }

  /** The client restarts: sessions are lost, and every torrent checks its resume data (progress 0) for a while. */
  restart(checkingMs = 1000): void {
    this.authState.sessions.clear();
    // A restarted client's rids start over: every rid a caller holds gets a full update.
    this.table.oldestRid = this.table.rid + 1;
    const before = [...this.table.tracked.values()].map((t) => ({
      hash: t.torrent.hash,
      state: t.torrent.state,
      progress: t.torrent.progress,
    }));
    for (const t of before) this.update(t.hash, { state: 'checkingResumeData', progress: 0 });
    const done = () => {
      for (const t of before)
        if (this.table.tracked.get(t.hash)?.torrent.state === 'checkingResumeData')
          this.update(t.hash, { state: t.state, progress: t.progress });
    };
    if (checkingMs <= 0) done();
    else setTimeout(done, checkingMs).unref();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const method = req.method ?? 'GET';
    const raw = await readBodyBytes(req);
    const body = raw.toString('utf8');
    const send: Send = (status, payload, headers = {}) => {
      const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
      this.bytesOut += text.length;
      res.writeHead(status, {
        'content-type': typeof payload === 'string' ? 'text/plain' : 'application/json',
        ...headers,
      });
      res.end(text);
    };
    try {
      if (url.pathname.startsWith('/emulator/')) return await control(this, method, url.pathname, body, send);
      if (this.upstream && url.pathname.startsWith('/api/v2/')) {
        if (await passThrough(this.upstream, this.options, req, url, body, res, raw))
          this.calls.set(url.pathname, (this.calls.get(url.pathname) ?? 0) + 1);
        return;
      }
      if (url.pathname.startsWith('/api/v2/')) this.calls.set(url.pathname, (this.calls.get(url.pathname) ?? 0) + 1);
      const verdict = gate({
        profile: this.profile,
        port: this.port,
        reverseProxy: this.auth.reverse_proxy,
        req,
        url,
        body,
        raw,
        session: (bearer) => this.authState.session(req, bearer),
      });
      if ('status' in verdict) return send(verdict.status, verdict.text);
      const { params, session, files } = verdict;
      const traits = this.traits;
      switch (`${verdict.scope}/${verdict.action}`) {
        case 'auth/login':
          return this.authState.login(params, req.socket.remoteAddress ?? '', session, send);
        case 'app/webapiVersion':
          return send(200, traits.webapi);
        case 'app/version':
          return send(200, traits.version);
        case 'torrents/info':
          return this.info(params, res, send);
        case 'sync/maindata':
          return send(
            200,
            this.authState.sessions.get(session!)!.sync.answer(this.table, params.get('rid'), this.profile),
          );
        case 'torrents/add':
          // A slow client (a busy disk, a far NAS): what a caller's timeouts and a bot's answers must bear.
          if (this.faults.add_delay_ms > 0) await new Promise((r) => setTimeout(r, this.faults.add_delay_ms));
          return this.add(params, send, files ?? []);
        case 'torrents/categories':
          return send(200, this.categories.answer());
        case 'torrents/createCategory': {
          // TorrentsController::createCategoryAction: requireParams, then 400 empty, 409 invalid or existing.
          if (missing(params, ['category'], send)) return;
          const name = params.get('category')!;
          if (name === '') return send(400, 'Category cannot be empty');
          if (!CategoryTable.isValidName(name)) return send(409, 'Incorrect category name');
          if (!this.categories.add(name, params.get('savePath') ?? '')) return send(409, 'Unable to create category');
          return send(200, '');
        }
        case 'torrents/delete': {
          // TorrentsController::deleteAction (torrentscontroller.cpp, 4.5.2 to 5.2.3 and master): BOTH are
          // required; deleteFiles is then read leniently (anything but "true" keeps the files).
          if (missing(params, ['hashes', 'deleteFiles'], send)) return;
          const withFiles = params.get('deleteFiles') === 'true';
          this.apply(params.get('hashes')!, (id) => {
            this.deletions.push({ hash: id, deleteFiles: withFiles });
            this.remove(id);
          });
          return send(200, '');
        }
        case 'torrents/setShareLimits': {
          // TorrentsController::setShareLimitsAction: 4.6+ requires inactiveSeedingTimeLimit beside the two others
          // (4.5 does not know it); -2 = the global limit, -1 = none; the time in minutes.
          if (missing(params, ['hashes', 'ratioLimit', 'seedingTimeLimit', 'inactiveSeedingTimeLimit'], send)) return;
          const ratio = Number(params.get('ratioLimit'));
          const minutes = Number(params.get('seedingTimeLimit'));
          this.apply(params.get('hashes')!, (id) =>
            this.update(id, {
              ratio_limit: Number.isFinite(ratio) ? ratio : -2,
              seeding_time_limit: Number.isInteger(minutes) ? minutes : -2,
            }),
          );
          return send(200, '');
        }
        case 'torrents/stop':
        case 'torrents/pause': {
          // 5.x has only /stop, 4.x only /pause (the gate answered 404 to the other).
          if (missing(params, ['hashes'], send)) return;
          this.apply(params.get('hashes')!, (id) => {
            const t = this.table.tracked.get(id)!.torrent;
            this.update(id, { state: t.progress >= 1 ? 'pausedUP' : 'pausedDL' });
          });
          return send(200, '');
        }
        case 'torrents/start':
        case 'torrents/resume': {
          if (missing(params, ['hashes'], send)) return;
          this.apply(params.get('hashes')!, (id) => {
            const t = this.table.tracked.get(id)!.torrent;
            if (!/^(paused|stopped)(UP|DL)$/.test(t.state)) return;
            this.update(id, { state: t.progress >= 1 ? 'stalledUP' : t.has_metadata ? 'downloading' : 'metaDL' });
          });
          return send(200, '');
        }
      }
      return send(404, 'Not Found');
    } catch (err) {
      return send(400, { error: err instanceof Error ? err.message : String(err) });
    }
  }

  /** applyToTorrents: `all`, or `|`-separated ids (any case); unknown ids are skipped. */
  private apply(hashes: string, action: (id: string) => void): void {
    const ids = hashes === 'all' ? [...this.table.tracked.keys()] : hashes.split('|').map((h) => h.toLowerCase());
    for (const id of ids) if (this.table.tracked.has(id)) action(id);
  }

  private info(query: URLSearchParams, res: http.ServerResponse, send: Send): void {
    const fault = this.faults.info;
    if (fault === 'hang') return void res.on('close', () => undefined); // never answers
    if (fault === '500') return send(500, 'Internal Server Error');
    if (fault === 'html') return send(200, '<html><body>Login page</body></html>');
    const category = query.get('category');
    const tag = query.get('tag');
    const hashes = query.get('hashes')?.toLowerCase().split('|').filter(Boolean);
    const list = [...this.table.tracked.values()]
      .map((t) => t.torrent)
      .filter((t) => category === null || this.categories.belongsTo(t.category, category))
      .filter((t) => tag === null || t.tags.split(', ').includes(tag))
      .filter((t) => !hashes?.length || hashes.includes(t.hash))
      .sort((a, b) => a.added_on - b.added_on);
    const answer = list.map((t) => serialised(this.profile, t));
    if (fault === 'truncated') return send(200, JSON.stringify(answer).slice(0, -3));
    return send(200, answer);
  }

  /**
   * torrents/add as TorrentsController::addAction answers it (torrentscontroller.cpp): up to 5.1 `Ok.` when
   * anything was added or is being fetched, else `Fails.` (a duplicate is a failure); 5.2.3 200 with
   * {added_torrent_ids, failure_count, pending_count, success_count}, 202 only when something is pending
   * (a URL being downloaded; a magnet's hash is known, so it is never pending), 409 `Conflict` when
   * nothing was added or is pending. Each URL counts on its own.
   */
  private add(params: URLSearchParams, send: Send, files: UploadedFile[]): void {
    const modern = this.traits.modern;
    // SessionImpl::addTorrent_impl: an unknown category is created; one that cannot be is dropped ("").
    let category = params.get('category') ?? '';
    if (category !== '' && !this.categories.categories.has(category) && !this.categories.add(category)) category = '';
    const autoTMM = params.get('autoTMM') === 'true';
    const placement = {
      category,
      auto_tmm: autoTMM,
      save_path: autoTMM
        ? this.categories.savePath(category)
        : params.get('savepath') || this.categories.defaultSavePath,
    };
    const added: string[] = [];
    let pending = 0;
    let failures = 0;
    // Uploaded .torrent files (the multipart `torrents` parts): one the client cannot load is BadData, 415,
    // `Error: '<file name>' is not a valid torrent file.` (TorrentsController::addAction); its metadata is known at once.
    for (const file of this.faults.add === 'fail' ? [] : files) {
      let torrent;
      try {
        torrent = parseTorrentFile(file.data, { allowPrivateAddresses: true });
      } catch {
        return send(415, `Error: '${file.filename}' is not a valid torrent file.`);
      }
      const v1 = torrent.infohashes.find((h) => h.kind === 'v1')?.infohash;
      const v2 = torrent.infohashes.find((h) => h.kind === 'v2')?.infohash;
      if (this.table.holding(v1, v2)) {
        failures++;
        continue;
      }
      const t = this.addTorrent({
        kind: v1 && v2 ? 'hybrid' : v1 ? 'v1' : 'v2',
        infohash_v1: v1,
        infohash_v2: v2,
        name: params.get('rename') || torrent.name,
        state: 'downloading',
        ...placement,
        tags: (params.get('tags') ?? '').split(',').filter(Boolean).join(', '),
        ...shareLimits(params),
      });
      added.push(t.hash);
    }
    const urls = this.faults.add === 'fail' ? [] : (params.get('urls') ?? '').split('\n');
    for (const url of urls.map((u) => u.trim()).filter(Boolean)) {
      // AddTorrentManager::addTorrent: a URL of a scheme Qt downloads is fetched later (pending).
      if (/^(https?|ftp|data|file):/i.test(url) && !/^magnet:/i.test(url)) {
        pending++;
        continue;
      }
      let magnet;
      try {
        magnet = parseMagnet(url);
      } catch {
        failures++;
        continue;
      }
      const v1 = magnet.infohashes.find((h) => h.kind === 'v1')?.infohash;
      const v2 = magnet.infohashes.find((h) => h.kind === 'v2')?.infohash;
      if (this.table.holding(v1, v2)) {
        failures++; // handleDuplicateTorrent: addTorrentFailed
        continue;
      }
      const t = this.addTorrent({
        kind: v1 && v2 ? 'hybrid' : v1 ? 'v1' : 'v2',
        infohash_v1: v1,
        infohash_v2: v2,
        name: magnet.name,
        state: 'metaDL',
        ...placement,
        tags: (params.get('tags') ?? '').split(',').filter(Boolean).join(', '),
        ...shareLimits(params),
        // A magnet naming both hashes makes both known at once; one hash alone waits for the metadata.
        metadata: v1 && v2 ? undefined : false,
      });
      added.push(t.hash);
    }
    if (this.faults.add === 'fail') failures = 1;
    if (!modern) return send(200, added.length || pending ? 'Ok.' : 'Fails.');
    if (!added.length && !pending) return send(409, 'Conflict');
    const body = {
      added_torrent_ids: added,
      failure_count: failures,
      pending_count: pending,
      success_count: added.length,
    };
    return send(pending > 0 ? 202 : 200, body);
  }
}

/** torrents/add's `ratioLimit` and `seedingTimeLimit` (minutes), as the torrent's limits; absent: the global (-2). */
function shareLimits(params: URLSearchParams): { ratio_limit?: number; seeding_time_limit?: number } {
  const ratio = params.has('ratioLimit') ? Number(params.get('ratioLimit')) : NaN;
  const minutes = params.has('seedingTimeLimit') ? Number(params.get('seedingTimeLimit')) : NaN;
  return {
    ...(Number.isFinite(ratio) ? { ratio_limit: ratio } : {}),
    ...(Number.isInteger(minutes) ? { seeding_time_limit: minutes } : {}),
  };
}

/** APIController::requireParams (apicontroller.cpp): 400 naming what is missing. */
function missing(params: URLSearchParams, names: string[], send: Send): boolean {
  const absent = names.filter((n) => !params.has(n));
  if (absent.length) send(400, `Missing required parameters: ${absent.join(', ')}`);
  return absent.length > 0;
}

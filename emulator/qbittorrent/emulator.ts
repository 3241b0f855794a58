import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../http';
import { parseMagnet } from '../../lib/downloads/magnet';
import { EmulatorAuth, Send } from './auth';
import { control, Faults } from './control';
import { Profile, PROFILES, stateName, TRAITS } from './profiles';
import { maindata } from './sync';
import { EmulatedTorrent, NewTorrent, TorrentTable } from './torrents';
import { passThrough, Upstream } from './upstream';

export { PROFILES } from './profiles';
export type { Profile } from './profiles';
export type { EmulatedTorrent, NewTorrent, TorrentKind } from './torrents';

/**
 * A qBittorrent Web API v2 emulator with one profile per behaviour family
 * users run: `4.6`, `5.1` and `5.2` (profiles.ts). Routes: auth/login,
 * app/webapiVersion, app/version, torrents/info (filters category, tag,
 * hashes), torrents/add, torrents/delete (deleteFiles required),
 * torrents/stop|pause, sync/maindata (rid, changed fields only). A wrong HTTP
 * method is 405 on every profile. Control API under /emulator (control.ts):
 *
 *   GET    /emulator/torrents
 *   POST   /emulator/torrents                {kind: v1|v2|hybrid|legacy, name?, state?, progress?, category?, tags?, metadata?: false}
 *   PATCH  /emulator/torrents/<hash>         {state?, progress?, name?}
 *   POST   /emulator/torrents/<hash>/metadata {infohash_v2?}  metadata arrives: a hybrid's `hash` becomes its TRUNCATED v2
 *   DELETE /emulator/torrents[/<hash>]       remove all / one
 *   PUT    /emulator/faults                  {add: ok|fail, info: ok|html|truncated|500|hang, add_delay_ms}
 *   PUT    /emulator/profile                 {profile: 4.6|5.1|5.2}
 *   GET    /emulator/auth                    {failed_logins, banned_until} per address
 *   PUT    /emulator/auth                    {max_fail_count?, ban_duration_ms?}; DELETE lifts every ban
 *   POST   /emulator/restart                 {checking_ms?}  the client restarts: sessions lost, every torrent
 *                                            `checkingResumeData` with progress 0 for checking_ms (default 1000)
 *   PUT    /emulator/upstream                {url, username, password}: pass /api/v2/* through to a REAL
 *                                            qBittorrent (the real-client tests); DELETE ends it
 *
 * What real qBittorrent does that this emulator reproduces (docs/downloads.md):
 * - MaxAuthenticationFailCount (5) refused logins ban the caller's address for
 *   BanDuration (1 h): login answers 403; the count resets only on a success
 *   or when the ban ends;
 * - 5.2's torrents/add: 200 + JSON on success; 409 when nothing was added,
 *   a duplicate OR a failure;
 * - after a restart a finished torrent reports `checkingResumeData`, progress 0;
 * - a hybrid added by a btih-only magnet has `hash` = v1 until its metadata
 *   arrives, then the truncated v2 (POST …/metadata);
 * - a login whose Referer/Origin names another host than Host is 401 (CSRF check).
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
  profile: Profile;
  /** Calls per route, for tests and the bench (poll cost). */
  readonly calls = new Map<string, number>();
  bytesOut = 0;
  readonly authState: EmulatorAuth;
  /** MaxAuthenticationFailCount and BanDuration. */
  readonly auth: { max_fail_count: number; ban_duration_ms: number };
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
    const body = await readBody(req);
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
        if (await passThrough(this.upstream, this.options, req, url, body, res))
          this.calls.set(url.pathname, (this.calls.get(url.pathname) ?? 0) + 1);
        return;
      }
      const route = ROUTES[url.pathname];
      if (!route) return send(404, 'Not Found');
      this.calls.set(url.pathname, (this.calls.get(url.pathname) ?? 0) + 1);
      if (route !== method) return send(405, 'Method Not Allowed');
      const traits = this.traits;
      if (url.pathname === '/api/v2/auth/login') {
        // qBittorrent's CSRF check: a Referer or Origin naming another host:port than Host is refused.
        const claimed = req.headers.origin ?? req.headers.referer;
        if (claimed && safeHost(claimed) !== req.headers.host) return send(401, 'Unauthorized');
        return this.authState.login(new URLSearchParams(body), req.socket.remoteAddress ?? '', send);
      }
      if (!this.authState.authorised(req)) return send(traits.modern ? 401 : 403, 'Forbidden');
      const form = new URLSearchParams(body);
      switch (url.pathname) {
        case '/api/v2/app/webapiVersion':
          return send(200, traits.webapi);
        case '/api/v2/app/version':
          return send(200, traits.version);
        case '/api/v2/torrents/info':
          return this.info(url.searchParams, res, send);
        case '/api/v2/sync/maindata':
          return send(200, maindata(this.table, Number(url.searchParams.get('rid') ?? 0)));
        case '/api/v2/torrents/add':
          // A slow client (a busy disk, a far NAS): what a caller's timeouts and a bot's answers must bear.
          if (this.faults.add_delay_ms > 0) await new Promise((r) => setTimeout(r, this.faults.add_delay_ms));
          return this.add(form, send);
        case '/api/v2/torrents/delete': {
          const hashes = form.get('hashes');
          const deleteFiles = form.get('deleteFiles');
          if (!hashes || (deleteFiles !== 'true' && deleteFiles !== 'false'))
            return send(400, 'hashes and deleteFiles are required');
          if (hashes === 'all') this.clear();
          else for (const h of hashes.split('|')) this.remove(h.toLowerCase());
          return send(200, '');
        }
        case '/api/v2/torrents/stop':
        case '/api/v2/torrents/pause': {
          // 5.x has only /stop, 4.x only /pause.
          if ((url.pathname === '/api/v2/torrents/stop') !== traits.stopped) return send(404, 'Not Found');
          const hashes = form.get('hashes') ?? '';
          for (const h of hashes.split('|')) {
            const t = this.table.tracked.get(h.toLowerCase());
            if (t) this.update(t.torrent.hash, { state: t.torrent.progress >= 1 ? 'pausedUP' : 'pausedDL' });
          }
          return send(200, '');
        }
      }
      return send(404, 'Not Found');
    } catch (err) {
      return send(400, { error: err instanceof Error ? err.message : String(err) });
    }
  }

  private info(query: URLSearchParams, res: http.ServerResponse, send: Send): void {
    const fault = this.faults.info;
    if (fault === 'hang') return void res.on('close', () => undefined); // never answers
    if (fault === '500') return send(500, 'Internal Server Error');
    if (fault === 'html') return send(200, '<html><body>Login page</body></html>');
    const category = query.get('category');
    const tag = query.get('tag');
    const hashes = query.get('hashes')?.toLowerCase().split('|');
    const list = [...this.table.tracked.values()]
      .map((t) => t.torrent)
      .filter((t) => category === null || t.category === category)
      .filter((t) => tag === null || t.tags.split(', ').includes(tag))
      .filter((t) => !hashes || hashes.includes(t.hash))
      .sort((a, b) => a.added_on - b.added_on);
    if (fault === 'truncated') return send(200, JSON.stringify(list).slice(0, -3));
    return send(200, list);
  }

  private add(form: URLSearchParams, send: Send): void {
    const modern = this.traits.modern;
    const answer = (added: string[], duplicates: number, failures: number) => {
      if (!modern) return send(200, failures || duplicates ? 'Fails.' : 'Ok.');
      const body = {
        added_torrent_ids: added,
        success_count: added.length,
        pending_count: added.length,
        failure_count: failures + duplicates,
      };
      // 5.2: nothing added (a duplicate or any failure) is 409; anything added is 200.
      if (!added.length) return send(409, body);
      return send(200, body);
    };
    if (this.faults.add === 'fail') return answer([], 0, 1);
    const added: string[] = [];
    let duplicates = 0;
    for (const uri of (form.get('urls') ?? '').split('\n').filter(Boolean)) {
      let magnet;
      try {
        magnet = parseMagnet(uri);
      } catch {
        return answer([], 0, 1);
      }
      const v1 = magnet.infohashes.find((h) => h.kind === 'v1')?.infohash;
      const v2 = magnet.infohashes.find((h) => h.kind === 'v2')?.infohash;
      if (this.table.holding(v1, v2)) {
        duplicates++;
        continue;
      }
      const t = this.addTorrent({
        kind: v1 && v2 ? 'hybrid' : v1 ? 'v1' : 'v2',
        infohash_v1: v1,
        infohash_v2: v2,
        name: magnet.name,
        state: 'metaDL',
        category: form.get('category') ?? '',
        tags: (form.get('tags') ?? '').split(',').filter(Boolean).join(', '),
        // A magnet naming both hashes makes both known at once; one hash alone waits for the metadata.
        metadata: v1 && v2 ? undefined : false,
      });
      added.push(t.hash);
    }
    return answer(added, duplicates, 0);
  }
}

const ROUTES: Record<string, string> = {
  '/api/v2/auth/login': 'POST',
  '/api/v2/app/webapiVersion': 'GET',
  '/api/v2/app/version': 'GET',
  '/api/v2/torrents/info': 'GET',
  '/api/v2/sync/maindata': 'GET',
  '/api/v2/torrents/add': 'POST',
  '/api/v2/torrents/delete': 'POST',
  '/api/v2/torrents/stop': 'POST',
  '/api/v2/torrents/pause': 'POST',
};

function safeHost(url: string): string | undefined {
  try {
    return new URL(url).host;
  } catch {
    return undefined;
  }
}

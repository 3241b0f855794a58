import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../http';
import { parseMagnet } from '../../lib/downloads/magnet';

/**
 * A qBittorrent Web API v2 emulator with one profile per behaviour family
 * users run: `4.6`, `5.1` and `5.2` (differences below). Routes: auth/login,
 * app/webapiVersion, app/version, torrents/info (filters category, tag,
 * hashes), torrents/add, torrents/delete (deleteFiles required),
 * torrents/stop|pause, sync/maindata (rid, changed fields only). A wrong HTTP
 * method is 405 on every profile. Control API under /emulator:
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
 *
 * Torrents mirror what a real client reports: a v2-only (or hybrid with
 * metadata) torrent's `hash` is its v2 hash truncated to 40 hex; a legacy
 * torrent has only `hash` (no infohash_v1/v2 fields).
 */

export type Profile = '4.6' | '5.1' | '5.2';
export const PROFILES: readonly Profile[] = ['4.6', '5.1', '5.2'];

interface ProfileTraits {
  webapi: string;
  version: string;
  /** 5.2: 204/401 login, cookie QBT_SID_<port>, JSON add answers (202/409), API keys. */
  modern: boolean;
  /** 5.x renamed paused* to stopped*. */
  stopped: boolean;
}

const TRAITS: Record<Profile, ProfileTraits> = {
  '4.6': { webapi: '2.9.3', version: 'v4.6.7', modern: false, stopped: false },
  '5.1': { webapi: '2.11.4', version: 'v5.1.2', modern: false, stopped: true },
  '5.2': { webapi: '2.15.1', version: 'v5.2.0', modern: true, stopped: true },
};

export type TorrentKind = 'v1' | 'v2' | 'hybrid' | 'legacy';

export interface NewTorrent {
  kind: TorrentKind;
  name?: string;
  state?: string;
  progress?: number;
  infohash_v1?: string;
  infohash_v2?: string;
  category?: string;
  tags?: string;
  /** false: a hybrid known only by its v1 hash until metadata arrives (as after a btih-only magnet). */
  metadata?: boolean;
}

/** What torrents/info answers for one torrent (a subset of the ~50 real fields). */
export interface EmulatedTorrent {
  hash: string;
  infohash_v1?: string;
  infohash_v2?: string;
  name: string;
  state: string;
  progress: number;
  added_on: number;
  category: string;
  tags: string;
  has_metadata: boolean;
  magnet_uri: string;
  [field: string]: unknown;
}

export type InfoFault = 'ok' | 'html' | 'truncated' | '500' | 'hang';

interface Tracked {
  torrent: EmulatedTorrent;
  /** rid at which each field last changed; `created` = rid of its (re)appearance under this id. */
  changed: Map<string, number>;
  created: number;
  /** The v2 hash a hybrid reveals when its metadata arrives. */
  hiddenV2?: string;
}

/** Removals remembered for maindata; older rids get a full update. */
const HISTORY = 10_000;

export interface EmulatorOptions {
  username: string;
  password: string;
  profile?: Profile;
  /** 5.2 only: a key accepted as `Authorization: Bearer <key>`. */
  apiKey?: string;
}

export class QbittorrentEmulator {
  private readonly tracked = new Map<string, Tracked>();
  private removed: Array<{ id: string; rid: number }> = [];
  private rid = 0;
  private oldestRid = 0;
  readonly faults = { add: 'ok' as 'ok' | 'fail', info: 'ok' as InfoFault, add_delay_ms: 0 };
  profile: Profile;
  /** Calls per route, for tests and the bench (poll cost). */
  readonly calls = new Map<string, number>();
  bytesOut = 0;
  private readonly sessions = new Set<string>();
  /** Refused logins and bans per caller address, as qBittorrent's AuthController keeps them. */
  private readonly failedLogins = new Map<string, { count: number; bannedUntil: number }>();
  readonly auth = { max_fail_count: 5, ban_duration_ms: 3_600_000 };
  private upstream?: { url: string; username: string; password: string };
  private port = 0;
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  constructor(private readonly options: EmulatorOptions) {
    this.profile = options.profile ?? '5.1';
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
    this.sessions.clear();
    // State names differ between profiles: rename what is there.
    for (const t of this.tracked.values()) this.update(t.torrent.hash, { state: this.stateName(t.torrent.state) });
  }

  /** Every torrent as torrents/info would answer it. */
  get torrents(): Map<string, EmulatedTorrent> {
    return new Map([...this.tracked].map(([id, t]) => [id, t.torrent]));
  }

  addTorrent(spec: NewTorrent): EmulatedTorrent {
    const v1 = spec.infohash_v1 ?? randomBytes(20).toString('hex');
    const v2 = spec.infohash_v2 ?? randomBytes(32).toString('hex');
    const pendingHybrid = spec.kind === 'hybrid' && spec.metadata === false;
    const hashes: Record<TorrentKind, Pick<EmulatedTorrent, 'hash' | 'infohash_v1' | 'infohash_v2'>> = {
      v1: { hash: v1, infohash_v1: v1, infohash_v2: '' },
      v2: { hash: v2.slice(0, 40), infohash_v1: '', infohash_v2: v2 },
      hybrid: pendingHybrid
        ? { hash: v1, infohash_v1: v1, infohash_v2: '' }
        : { hash: v2.slice(0, 40), infohash_v1: v1, infohash_v2: v2 },
      legacy: { hash: v1 },
    };
    const h = hashes[spec.kind];
    const torrent: EmulatedTorrent = {
      ...h,
      name: spec.name ?? `torrent-${h.hash.slice(0, 8)}`,
      state: this.stateName(spec.state ?? 'downloading'),
      progress: spec.progress ?? 0,
      added_on: Math.floor(Date.now() / 1000),
      category: spec.category ?? '',
      tags: spec.tags ?? '',
      has_metadata: spec.metadata !== false,
      magnet_uri: `magnet:?xt=urn:btih:${h.hash}`,
    };
    this.put(torrent, pendingHybrid ? v2 : undefined);
    return torrent;
  }

  /** Changes fields of a torrent, recorded for maindata. */
  update(hash: string, patch: Partial<EmulatedTorrent>): EmulatedTorrent | undefined {
    const t = this.tracked.get(hash);
    if (!t) return undefined;
    const rid = ++this.rid;
    for (const [field, value] of Object.entries(patch)) {
      if (value === undefined || field === 'hash') continue;
      if (t.torrent[field] !== value) {
        t.torrent[field] = field === 'state' ? this.stateName(value as string) : value;
        t.changed.set(field, rid);
      }
    }
    return t.torrent;
  }

  /** Metadata arrives: a hybrid reveals its v2 hash, and its id becomes the v2 hash truncated to 40 hex. */
  metadataArrives(hash: string, infohashV2?: string): EmulatedTorrent | undefined {
    const t = this.tracked.get(hash);
    if (!t) return undefined;
    const v2 = infohashV2 ?? t.hiddenV2;
    if (!v2) {
      this.update(hash, { has_metadata: true });
      return t.torrent;
    }
    this.remove(hash);
    const torrent = { ...t.torrent, hash: v2.slice(0, 40), infohash_v2: v2, has_metadata: true };
    this.put(torrent);
    return torrent;
  }

  remove(hash: string): boolean {
    if (!this.tracked.delete(hash)) return false;
    this.removed.push({ id: hash, rid: ++this.rid });
    if (this.removed.length > HISTORY) this.oldestRid = this.removed.shift()!.rid;
    return true;
  }

  clear(): void {
    for (const id of [...this.tracked.keys()]) this.remove(id);
  }

  private put(torrent: EmulatedTorrent, hiddenV2?: string): void {
    const rid = ++this.rid;
    this.tracked.set(torrent.hash, { torrent, changed: new Map(), created: rid, hiddenV2 });
  }

  private stateName(state: string): string {
    const traits = TRAITS[this.profile];
    if (traits.stopped) return state.replace(/^paused(UP|DL)$/, 'stopped$1');
    return state.replace(/^stopped(UP|DL)$/, 'paused$1');
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const method = req.method ?? 'GET';
    const body = await readBody(req);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
      this.bytesOut += text.length;
      res.writeHead(status, {
        'content-type': typeof payload === 'string' ? 'text/plain' : 'application/json',
        ...headers,
      });
      res.end(text);
    };
    try {
      if (url.pathname.startsWith('/emulator/')) return await this.control(method, url.pathname, body, send);
      if (this.upstream && url.pathname.startsWith('/api/v2/')) return await this.pass(req, url, body, res);
      const route = ROUTES[url.pathname];
      if (!route) return send(404, 'Not Found');
      this.calls.set(url.pathname, (this.calls.get(url.pathname) ?? 0) + 1);
      if (route !== method) return send(405, 'Method Not Allowed');
      const traits = TRAITS[this.profile];
      if (url.pathname === '/api/v2/auth/login') {
        // qBittorrent's CSRF check: a Referer or Origin naming another host:port than Host is refused.
        const claimed = req.headers.origin ?? req.headers.referer;
        if (claimed && safeHost(claimed) !== req.headers.host) return send(401, 'Unauthorized');
        return this.login(new URLSearchParams(body), req.socket.remoteAddress ?? '', send);
      }
      if (!this.authorised(req)) return send(traits.modern ? 401 : 403, 'Forbidden');
      const form = new URLSearchParams(body);
      switch (url.pathname) {
        case '/api/v2/app/webapiVersion':
          return send(200, traits.webapi);
        case '/api/v2/app/version':
          return send(200, traits.version);
        case '/api/v2/torrents/info':
          return this.info(url.searchParams, res, send);
        case '/api/v2/sync/maindata':
          return send(200, this.maindata(Number(url.searchParams.get('rid') ?? 0)));
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
            const t = this.tracked.get(h.toLowerCase());
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

  private login(
    form: URLSearchParams,
    address: string,
    send: (status: number, payload: unknown, headers?: Record<string, string>) => void,
  ): void {
    const modern = TRAITS[this.profile].modern;
    const failed = this.failedLogins.get(address);
    if (failed && failed.bannedUntil > Date.now()) return send(403, 'Your IP address has been banned');
    if (failed && failed.bannedUntil > 0) this.failedLogins.delete(address); // the ban is over: the count starts again
    if (form.get('username') !== this.options.username || form.get('password') !== this.options.password) {
      const entry = this.failedLogins.get(address) ?? { count: 0, bannedUntil: 0 };
      entry.count++;
      if (entry.count >= this.auth.max_fail_count) entry.bannedUntil = Date.now() + this.auth.ban_duration_ms;
      this.failedLogins.set(address, entry);
      return modern ? send(401, '') : send(200, 'Fails.');
    }
    this.failedLogins.delete(address);
    const sid = randomBytes(16).toString('hex');
    this.sessions.add(sid);
    const cookie = `${this.cookieName()}=${sid}; HttpOnly; SameSite=Strict; path=/`;
    return modern ? send(204, '', { 'set-cookie': cookie }) : send(200, 'Ok.', { 'set-cookie': cookie });
  }

  private cookieName(): string {
    return TRAITS[this.profile].modern ? `QBT_SID_${this.port}` : 'SID';
  }

  private authorised(req: http.IncomingMessage): boolean {
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (key !== undefined)
      return TRAITS[this.profile].modern && this.options.apiKey !== undefined && key === this.options.apiKey;
    const name = this.cookieName();
    const sid = new RegExp(`(?:^|;\\s*)${name}=([^;]+)`).exec(req.headers.cookie ?? '')?.[1];
    return sid !== undefined && this.sessions.has(sid);
  }

  private info(
    query: URLSearchParams,
    res: http.ServerResponse,
    send: (status: number, payload: unknown) => void,
  ): void {
    const fault = this.faults.info;
    if (fault === 'hang') return void res.on('close', () => undefined); // never answers
    if (fault === '500') return send(500, 'Internal Server Error');
    if (fault === 'html') return send(200, '<html><body>Login page</body></html>');
    const category = query.get('category');
    const tag = query.get('tag');
    const hashes = query.get('hashes')?.toLowerCase().split('|');
    const list = [...this.tracked.values()]
      .map((t) => t.torrent)
      .filter((t) => category === null || t.category === category)
      .filter((t) => tag === null || t.tags.split(', ').includes(tag))
      .filter((t) => !hashes || hashes.includes(t.hash))
      .sort((a, b) => a.added_on - b.added_on);
    if (fault === 'truncated') return send(200, JSON.stringify(list).slice(0, -3));
    return send(200, list);
  }

  /** Changed fields since `rid`; a full update when rid is 0 or older than the history kept. */
  private maindata(since: number): Record<string, unknown> {
    const full = !(since > 0) || since < this.oldestRid || since > this.rid;
    const torrents: Record<string, Partial<EmulatedTorrent>> = {};
    for (const [id, t] of this.tracked) {
      if (full || t.created > since) torrents[id] = { ...t.torrent };
      else {
        const fields = [...t.changed].filter(([, rid]) => rid > since).map(([field]) => field);
        if (fields.length) torrents[id] = Object.fromEntries(fields.map((f) => [f, t.torrent[f]]));
      }
    }
    const removed = full ? [] : this.removed.filter((r) => r.rid > since && !this.tracked.has(r.id)).map((r) => r.id);
    return {
      rid: this.rid,
      full_update: full,
      torrents,
      ...(removed.length ? { torrents_removed: removed } : {}),
      server_state: {},
    };
  }

  private add(form: URLSearchParams, send: (status: number, payload: unknown) => void): void {
    const modern = TRAITS[this.profile].modern;
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
      const exists = [...this.tracked.values()].some(
        ({ torrent: t }) => (v1 && (t.infohash_v1 === v1 || t.hash === v1)) || (v2 && t.infohash_v2 === v2),
      );
      if (exists) {
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

  /** The client restarts: sessions are lost, and every torrent checks its resume data (progress 0) for a while. */
  restart(checkingMs = 1000): void {
    this.sessions.clear();
    // A restarted client's rids start over: every rid a caller holds gets a full update.
    this.oldestRid = this.rid + 1;
    const before = [...this.tracked.values()].map((t) => ({
      hash: t.torrent.hash,
      state: t.torrent.state,
      progress: t.torrent.progress,
    }));
    for (const t of before) this.update(t.hash, { state: 'checkingResumeData', progress: 0 });
    const done = () => {
      for (const t of before)
        if (this.tracked.get(t.hash)?.torrent.state === 'checkingResumeData')
          this.update(t.hash, { state: t.state, progress: t.progress });
    };
    if (checkingMs <= 0) done();
    else setTimeout(done, checkingMs).unref();
  }

  /** Passes a call through to the real qBittorrent, logging in there with its own credentials. */
  private async pass(req: http.IncomingMessage, url: URL, body: string, res: http.ServerResponse): Promise<void> {
    const upstream = this.upstream!;
    let payload = body;
    if (url.pathname === '/api/v2/auth/login') {
      const form = new URLSearchParams(body);
      // Our credentials stand for the upstream's; anything else is passed on as it came (and refused there).
      if (form.get('username') === this.options.username && form.get('password') === this.options.password)
        payload = new URLSearchParams({ username: upstream.username, password: upstream.password }).toString();
    }
    const headers: Record<string, string> = {};
    for (const name of ['cookie', 'content-type', 'authorization'])
      if (typeof req.headers[name] === 'string') headers[name] = req.headers[name] as string;
    // The upstream's CSRF check compares Referer with its own host: name it.
    headers.referer = upstream.url;
    let answer: Response;
    let text: string;
    try {
      answer = await fetch(`${upstream.url}${url.pathname}${url.search}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : payload,
        signal: AbortSignal.timeout(30_000),
      });
      text = await answer.text();
    } catch (err) {
      // The upstream is down (restarting) or broke off: a gateway's answer, as a reverse proxy in front of it gives.
      const cause = (err as { cause?: unknown }).cause;
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`upstream ${upstream.url}: ${String(err)}${cause ? ` (${String(cause)})` : ''}`);
      return;
    }
    this.calls.set(url.pathname, (this.calls.get(url.pathname) ?? 0) + 1);
    const out: Record<string, string | string[]> = {
      'content-type': answer.headers.get('content-type') ?? 'text/plain',
    };
    const cookies = answer.headers.getSetCookie();
    if (cookies.length) out['set-cookie'] = cookies;
    res.writeHead(answer.status, out);
    res.end(text);
  }

  private async control(
    method: string,
    path: string,
    body: string,
    send: (status: number, payload: unknown) => void,
  ): Promise<void> {
    const parts = path.split('/').filter(Boolean); // ['emulator', 'torrents', hash?, 'metadata'?]
    const json = () => (body ? (JSON.parse(body) as Record<string, unknown>) : {});
    if (parts[1] === 'auth') {
      if (method === 'PUT') {
        const given = json();
        if (given.max_fail_count !== undefined) this.auth.max_fail_count = Math.max(1, Number(given.max_fail_count));
        if (given.ban_duration_ms !== undefined) this.auth.ban_duration_ms = Math.max(0, Number(given.ban_duration_ms));
      }
      if (method === 'DELETE') this.failedLogins.clear();
      return send(200, {
        ...this.auth,
        addresses: Object.fromEntries(
          [...this.failedLogins].map(([a, f]) => [
            a,
            { failed_logins: f.count, banned_until: f.bannedUntil ? new Date(f.bannedUntil).toISOString() : null },
          ]),
        ),
      });
    }
    if (parts[1] === 'restart' && method === 'POST') {
      this.restart(Number(json().checking_ms ?? 1000));
      return send(200, { restarted: true });
    }
    if (parts[1] === 'upstream') {
      if (method === 'DELETE') {
        this.upstream = undefined;
        return send(200, { upstream: null });
      }
      if (method === 'PUT') {
        const given = json();
        if (typeof given.url !== 'string' || typeof given.username !== 'string' || typeof given.password !== 'string')
          return send(400, { error: 'url, username and password are required' });
        if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(given.url))
          return send(400, { error: 'the upstream must be a qBittorrent on loopback (http://127.0.0.1:<port>)' });
        this.upstream = { url: given.url, username: given.username, password: given.password };
        return send(200, { upstream: given.url });
      }
    }
    if (parts[1] === 'torrents') {
      if (method === 'GET' && parts.length === 2)
        return send(
          200,
          [...this.tracked.values()].map((t) => t.torrent),
        );
      if (method === 'POST' && parts.length === 2) {
        const spec = json() as unknown as NewTorrent;
        if (!['v1', 'v2', 'hybrid', 'legacy'].includes(spec.kind))
          return send(400, { error: 'kind must be v1, v2, hybrid or legacy' });
        return send(201, this.addTorrent(spec));
      }
      if (method === 'PATCH' && parts.length === 3) {
        const patch = json();
        const t = this.update(parts[2], pick(patch, ['state', 'progress', 'name', 'category']));
        return t ? send(200, t) : send(404, { error: 'no such torrent' });
      }
      if (method === 'POST' && parts[3] === 'metadata') {
        const t = this.metadataArrives(parts[2], json().infohash_v2 as string | undefined);
        return t ? send(200, t) : send(404, { error: 'no such torrent' });
      }
      if (method === 'DELETE') {
        if (parts[2]) return this.remove(parts[2]) ? send(204, '') : send(404, { error: 'no such torrent' });
        this.clear();
        return send(204, '');
      }
    }
    if (parts[1] === 'faults' && method === 'PUT') {
      const faults = json() as { add?: 'ok' | 'fail'; info?: InfoFault; add_delay_ms?: number };
      if (faults.add) this.faults.add = faults.add;
      if (faults.add_delay_ms !== undefined) this.faults.add_delay_ms = Math.max(0, Number(faults.add_delay_ms) || 0);
      if (faults.info) this.faults.info = faults.info;
      return send(200, this.faults);
    }
    if (parts[1] === 'profile' && method === 'PUT') {
      try {
        this.setProfile(json().profile as Profile);
      } catch (err) {
        return send(400, { error: (err as Error).message });
      }
      return send(200, { profile: this.profile, webapi: TRAITS[this.profile].webapi });
    }
    if (parts[1] === 'profile' && method === 'GET')
      return send(200, { profile: this.profile, webapi: TRAITS[this.profile].webapi });
    return send(404, { error: 'unknown emulator route' });
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

function pick(value: Record<string, unknown>, keys: string[]): Partial<EmulatedTorrent> {
  return Object.fromEntries(
    keys.filter((k) => value[k] !== undefined).map((k) => [k, value[k]]),
  ) as Partial<EmulatedTorrent>;
}

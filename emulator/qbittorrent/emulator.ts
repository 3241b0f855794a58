import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../http';
import { parseMagnet } from '../../lib/downloads/magnet';
import type { TorrentInfo } from '../../lib/torrents/client';

/**
 * A qBittorrent Web API v2 emulator: the routes the downloads domain uses
 * (auth/login, torrents/info, torrents/add, torrents/delete) with cookie
 * sessions, plus a control API under /emulator for tests and humans:
 *
 *   POST   /emulator/torrents        {kind: v1|v2|hybrid|legacy, name?, state?, progress?}
 *   PATCH  /emulator/torrents/<hash> {state?, progress?}
 *   DELETE /emulator/torrents        remove all
 *   PUT    /emulator/faults          {add: "fail"|"ok"}
 *
 * Torrents mirror what a real client reports: a v2-only torrent's `hash` is
 * its v2 hash truncated to 40 hex; a legacy torrent has only `hash`.
 */

export type TorrentKind = 'v1' | 'v2' | 'hybrid' | 'legacy';

export interface NewTorrent {
  kind: TorrentKind;
  name?: string;
  state?: string;
  progress?: number;
  infohash_v1?: string;
  infohash_v2?: string;
}

export class QbittorrentEmulator {
  readonly torrents = new Map<string, TorrentInfo>();
  readonly faults = { add: 'ok' as 'ok' | 'fail' };
  private readonly sessions = new Set<string>();
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  constructor(private readonly credentials: { username: string; password: string }) {}

  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, host, resolve));
    const address = this.server.address() as AddressInfo;
    return `http://${host}:${address.port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  addTorrent(spec: NewTorrent): TorrentInfo {
    const v1 = spec.infohash_v1 ?? randomBytes(20).toString('hex');
    const v2 = spec.infohash_v2 ?? randomBytes(32).toString('hex');
    const hashes: Record<TorrentKind, Pick<TorrentInfo, 'hash' | 'infohash_v1' | 'infohash_v2'>> = {
      v1: { hash: v1, infohash_v1: v1, infohash_v2: '' },
      v2: { hash: v2.slice(0, 40), infohash_v1: '', infohash_v2: v2 },
      hybrid: { hash: v1, infohash_v1: v1, infohash_v2: v2 },
      legacy: { hash: v1 },
    };
    const torrent: TorrentInfo = {
      ...hashes[spec.kind],
      name: spec.name ?? `torrent-${hashes[spec.kind].hash.slice(0, 8)}`,
      state: spec.state ?? 'downloading',
      progress: spec.progress ?? 0,
      added_on: Math.floor(Date.now() / 1000),
    };
    this.torrents.set(torrent.hash, torrent);
    return torrent;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const body = await readBody(req);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      const text = typeof payload === 'string' ? payload : JSON.stringify(payload);
      res.writeHead(status, { 'content-type': typeof payload === 'string' ? 'text/plain' : 'application/json', ...headers });
      res.end(text);
    };
    try {
      if (url.pathname.startsWith('/emulator/')) return this.control(req.method ?? 'GET', url.pathname, body, send);
      if (url.pathname === '/api/v2/auth/login' && req.method === 'POST') {
        const form = new URLSearchParams(body);
        if (form.get('username') !== this.credentials.username || form.get('password') !== this.credentials.password) return send(200, 'Fails.');
        const sid = randomBytes(16).toString('hex');
        this.sessions.add(sid);
        return send(200, 'Ok.', { 'set-cookie': `SID=${sid}; HttpOnly; path=/` });
      }
      const sid = /(?:^|;\s*)SID=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
      if (!sid || !this.sessions.has(sid)) return send(403, 'Forbidden');
      if (url.pathname === '/api/v2/torrents/info' && req.method === 'GET') {
        return send(200, [...this.torrents.values()].sort((a, b) => a.added_on - b.added_on));
      }
      if (url.pathname === '/api/v2/torrents/add' && req.method === 'POST') {
        if (this.faults.add === 'fail') return send(200, 'Fails.');
        for (const uri of (new URLSearchParams(body).get('urls') ?? '').split('\n').filter(Boolean)) {
          let magnet;
          try {
            magnet = parseMagnet(uri);
          } catch {
            return send(200, 'Fails.');
          }
          const v1 = magnet.infohashes.find((h) => h.kind === 'v1')?.infohash;
          const v2 = magnet.infohashes.find((h) => h.kind === 'v2')?.infohash;
          const exists = [...this.torrents.values()].some((t) => (v1 && t.infohash_v1 === v1) || (v2 && t.infohash_v2 === v2));
          if (!exists) {
            this.addTorrent({ kind: v1 && v2 ? 'hybrid' : v1 ? 'v1' : 'v2', infohash_v1: v1, infohash_v2: v2, name: magnet.name, state: 'metaDL' });
          }
        }
        return send(200, 'Ok.');
      }
      if (url.pathname === '/api/v2/torrents/delete' && req.method === 'POST') {
        const hashes = new URLSearchParams(body).get('hashes') ?? '';
        if (hashes === 'all') this.torrents.clear();
        else for (const h of hashes.split('|')) this.torrents.delete(h.toLowerCase());
        return send(200, '');
      }
      return send(404, 'Not Found');
    } catch (err) {
      return send(400, { error: err instanceof Error ? err.message : String(err) });
    }
  }

  private control(method: string, path: string, body: string, send: (status: number, payload: unknown) => void): void {
    const parts = path.split('/').filter(Boolean); // ['emulator', 'torrents', hash?]
    if (parts[1] === 'torrents' && method === 'GET') return send(200, [...this.torrents.values()]);
    if (parts[1] === 'torrents' && method === 'POST' && parts.length === 2) {
      const spec = JSON.parse(body) as NewTorrent;
      if (!['v1', 'v2', 'hybrid', 'legacy'].includes(spec.kind)) return send(400, { error: 'kind must be v1, v2, hybrid or legacy' });
      return send(201, this.addTorrent(spec));
    }
    if (parts[1] === 'torrents' && method === 'PATCH' && parts[2]) {
      const torrent = this.torrents.get(parts[2]);
      if (!torrent) return send(404, { error: 'no such torrent' });
      const patch = JSON.parse(body) as Partial<Pick<TorrentInfo, 'state' | 'progress'>>;
      Object.assign(torrent, pick(patch, ['state', 'progress']));
      return send(200, torrent);
    }
    if (parts[1] === 'torrents' && method === 'DELETE') {
      this.torrents.clear();
      return send(204, '');
    }
    if (parts[1] === 'faults' && method === 'PUT') {
      const faults = JSON.parse(body) as { add?: 'ok' | 'fail' };
      if (faults.add) this.faults.add = faults.add;
      return send(200, this.faults);
    }
    return send(404, { error: 'unknown emulator route' });
  }
}

function pick<T extends object>(value: T, keys: Array<keyof T>): Partial<T> {
  return Object.fromEntries(keys.filter((k) => value[k] !== undefined).map((k) => [k, value[k]])) as Partial<T>;
}

import type { EmulatorAuth } from './auth';
import type { Profile, ProfileTraits } from './profiles';
import type { CategoryTable } from './categories';
import type { EmulatedTorrent, NewTorrent } from './torrents';
import type { Upstream } from './upstream';

export type InfoFault = 'ok' | 'html' | 'truncated' | '500' | 'hang';
export interface Faults {
  add: 'ok' | 'fail';
  info: InfoFault;
  add_delay_ms: number;
}

/** What the control API drives (QbittorrentEmulator). */
export interface Controlled {
  readonly authState: EmulatorAuth;
  readonly auth: { max_fail_count: number; ban_duration_ms: number; reverse_proxy: boolean };
  readonly faults: Faults;
  readonly profile: Profile;
  readonly traits: ProfileTraits;
  readonly torrents: Map<string, EmulatedTorrent>;
  readonly categories: CategoryTable;
  upstream?: Upstream;
  restart(checkingMs: number): void;
  setProfile(profile: Profile): void;
  addTorrent(spec: NewTorrent): EmulatedTorrent;
  update(hash: string, patch: Partial<EmulatedTorrent>): EmulatedTorrent | undefined;
  metadataArrives(hash: string, infohashV2?: string): EmulatedTorrent | undefined;
  remove(hash: string): boolean;
  clear(): void;
  setFreeSpace(bytes: number): void;
}

/** The emulator's own control API under /emulator (the routes are listed in emulator.ts). */
export async function control(
  emu: Controlled,
  method: string,
  path: string,
  body: string,
  send: (status: number, payload: unknown) => void,
): Promise<void> {
  const parts = path.split('/').filter(Boolean); // ['emulator', 'torrents', hash?, 'metadata'?]
  const json = () => (body ? (JSON.parse(body) as Record<string, unknown>) : {});
  if (parts[1] === 'auth') {
    const auth = emu.authState;
    if (method === 'PUT') {
      const given = json();
      if (given.max_fail_count !== undefined) emu.auth.max_fail_count = Math.max(1, Number(given.max_fail_count));
      if (given.ban_duration_ms !== undefined) emu.auth.ban_duration_ms = Math.max(0, Number(given.ban_duration_ms));
      // WebUI "reverse proxy support" with the proxy trusted: X-Forwarded-Host stands for Host in the CSRF check.
      if (given.reverse_proxy !== undefined) emu.auth.reverse_proxy = given.reverse_proxy === true;
    }
    if (method === 'DELETE') auth.failedLogins.clear();
    return send(200, {
      ...emu.auth,
      addresses: Object.fromEntries(
        [...auth.failedLogins].map(([a, f]) => [
          a,
          { failed_logins: f.count, banned_until: f.bannedUntil ? new Date(f.bannedUntil).toISOString() : null },
        ]),
      ),
    });
  }
  if (parts[1] === 'restart' && method === 'POST') {
    emu.restart(Number(json().checking_ms ?? 1000));
    return send(200, { restarted: true });
  }
  if (parts[1] === 'upstream') {
    if (method === 'DELETE') {
      emu.upstream = undefined;
      return send(200, { upstream: null });
    }
    if (method === 'PUT') {
      const given = json();
      if (typeof given.url !== 'string' || typeof given.username !== 'string' || typeof given.password !== 'string')
        return send(400, { error: 'url, username and password are required' });
      if (!/^http:\/\/127\.0\.0\.1:\d+$/.test(given.url))
        return send(400, { error: 'the upstream must be a qBittorrent on loopback (http://127.0.0.1:<port>)' });
      emu.upstream = { url: given.url, username: given.username, password: given.password };
      return send(200, { upstream: given.url });
    }
  }
  if (parts[1] === 'torrents') {
    if (method === 'GET' && parts.length === 2) return send(200, [...emu.torrents.values()]);
    if (method === 'POST' && parts.length === 2) {
      const spec = json() as unknown as NewTorrent;
      if (!['v1', 'v2', 'hybrid', 'legacy'].includes(spec.kind))
        return send(400, { error: 'kind must be v1, v2, hybrid or legacy' });
      return send(201, emu.addTorrent(spec));
    }
    if (method === 'PATCH' && parts.length === 3) {
      const patch = json();
      const t = emu.update(
        parts[2],
        pick(patch, [
          'state',
          'progress',
          'name',
          'category',
          'size',
          'amount_left',
          'downloaded',
          'dlspeed',
          'upspeed',
          'eta',
          'num_seeds',
          'num_leechs',
          'ratio',
          'seeding_time',
          'uploaded',
        ]),
      );
      return t ? send(200, t) : send(404, { error: 'no such torrent' });
    }
    if (method === 'POST' && parts[3] === 'metadata') {
      const t = emu.metadataArrives(parts[2], json().infohash_v2 as string | undefined);
      return t ? send(200, t) : send(404, { error: 'no such torrent' });
    }
    if (method === 'DELETE') {
      if (parts[2]) return emu.remove(parts[2]) ? send(204, '') : send(404, { error: 'no such torrent' });
      emu.clear();
      return send(204, '');
    }
  }
  if (parts[1] === 'categories') {
    const table = emu.categories;
    if (method === 'PUT') {
      const given = json();
      if (given.subcategories !== undefined) table.subcategories = given.subcategories === true;
      if (typeof given.default_save_path === 'string') table.defaultSavePath = given.default_save_path;
    }
    if (method === 'PUT' || method === 'GET')
      return send(200, {
        subcategories: table.subcategories,
        default_save_path: table.defaultSavePath,
        categories: Object.fromEntries(table.categories),
      });
  }
  if (parts[1] === 'disk' && method === 'PUT') {
    const free = Number(json().free_space_on_disk);
    if (!Number.isSafeInteger(free) || free < 0)
      return send(400, { error: 'free_space_on_disk: bytes, an integer >= 0' });
    emu.setFreeSpace(free);
    return send(200, { free_space_on_disk: free });
  }
  if (parts[1] === 'faults' && method === 'PUT') {
    const faults = json() as { add?: 'ok' | 'fail'; info?: InfoFault; add_delay_ms?: number };
    if (faults.add) emu.faults.add = faults.add;
    if (faults.add_delay_ms !== undefined) emu.faults.add_delay_ms = Math.max(0, Number(faults.add_delay_ms) || 0);
    if (faults.info) emu.faults.info = faults.info;
    return send(200, emu.faults);
  }
  if (parts[1] === 'profile' && method === 'PUT') {
    try {
      emu.setProfile(json().profile as Profile);
    } catch (err) {
      return send(400, { error: (err as Error).message });
    }
    return send(200, { profile: emu.profile, webapi: emu.traits.webapi });
  }
  if (parts[1] === 'profile' && method === 'GET') return send(200, { profile: emu.profile, webapi: emu.traits.webapi });
  return send(404, { error: 'unknown emulator route' });
}

function pick(value: Record<string, unknown>, keys: string[]): Partial<EmulatedTorrent> {
  return Object.fromEntries(
    keys.filter((k) => value[k] !== undefined).map((k) => [k, value[k]]),
  ) as Partial<EmulatedTorrent>;
}

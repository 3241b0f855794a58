import { torrentClientConfigured } from '../../../lib/torrents/config';
import { checkTorrentClient } from '../../../tools/stack/emulators';
import { createLogger } from '../../../lib/log';
import {
  TorrentAddRefusedError,
  TorrentClientAuthError,
  TorrentClientVersionError,
} from '../../../lib/torrents/errors';
import { DEFAULT_CATEGORY, QBittorrentClient, QBittorrentOptions } from '../../../lib/torrents/qbittorrent';
import { Profile, PROFILES, QbittorrentEmulator } from '../../../emulator/qbittorrent/emulator';
import { v1 } from '../../support/downloads';

/** The client against the emulator's HTTP API in each profile (no stack needed, but it is real HTTP). */
let emulator: QbittorrentEmulator;
let url: string;
const API_KEY = 'qbt_AbCdEf0123456789';

async function start(profile: Profile) {
  emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile, apiKey: API_KEY });
  url = await emulator.listen();
}
afterEach(() => emulator?.close());

/** A client whose every HTTP exchange is recorded. */
function recorded(opts: Partial<QBittorrentOptions> = {}) {
  const exchanges: Array<{ path: string; status: number; cookie?: string; setCookie: string[]; body?: string }> = [];
  const recordingFetch: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const copy = res.clone();
    exchanges.push({
      path: new URL(String(input)).pathname,
      status: res.status,
      cookie: (init?.headers as Record<string, string>)?.cookie,
      setCookie: res.headers.getSetCookie(),
      body: await copy.text(),
    });
    return res;
  };
  const client = new QBittorrentClient({
    baseUrl: url,
    auth: { kind: 'password', username: 'admin', password: 'pw' },
    fetch: recordingFetch,
    ...opts,
  });
  return { client, exchanges };
}

describe('qBittorrent 5.2: login 204 + QBT_SID_<port>, JSON add answers', () => {
  beforeEach(() => start('5.2'));

  it('logs in with 204, sends back the QBT_SID_<port> cookie it was given, and adds (200), then a duplicate (409, looked up: present) is success', async () => {
    const { client, exchanges } = recorded();
    const h = v1();
    await client.add(`magnet:?xt=urn:btih:${h.infohash}&dn=x`, { tags: ['01abc'] });
    const login = exchanges.find((e) => e.path === '/api/v2/auth/login')!;
    expect(login.status).toBe(204);
    const port = new URL(url).port;
    expect(login.setCookie[0]).toMatch(new RegExp(`^QBT_SID_${port}=`));
    const add = exchanges.find((e) => e.path === '/api/v2/torrents/add')!;
    expect(add.status).toBe(200);
    // A magnet's hash is known at once: added, never pending (202 is for a URL still being fetched).
    expect(JSON.parse(add.body!)).toEqual({
      added_torrent_ids: [h.infohash],
      failure_count: 0,
      pending_count: 0,
      success_count: 1,
    });
    expect(add.cookie).toBe(login.setCookie[0].split(';')[0]);
    expect(emulator.torrents.get(h.infohash)).toMatchObject({ category: DEFAULT_CATEGORY, tags: '01abc' });

    await client.add(`magnet:?xt=urn:btih:${h.infohash}&dn=x`);
    expect(exchanges.filter((e) => e.path === '/api/v2/torrents/add').map((e) => e.status)).toEqual([200, 409]);
    expect(exchanges.filter((e) => e.path === '/api/v2/torrents/info').length).toBeGreaterThan(0);
  });

  it('a wrong password is a typed auth error (401)', async () => {
    const { client } = recorded({ auth: { kind: 'password', username: 'admin', password: 'nope' } });
    await expect(client.snapshot()).rejects.toBeInstanceOf(TorrentClientAuthError);
  });

  it('an API key works without any login; a wrong key is a typed auth error', async () => {
    const { client, exchanges } = recorded({ auth: { kind: 'apiKey', key: API_KEY } });
    const h = v1();
    await client.add(`magnet:?xt=urn:btih:${h.infohash}`);
    expect((await client.snapshot()).present.map((t) => t.hash)).toEqual([h.infohash]);
    expect(exchanges.some((e) => e.path === '/api/v2/auth/login')).toBe(false);
    const wrong = recorded({ auth: { kind: 'apiKey', key: 'qbt_wrongwrongwrong' } }).client;
    await expect(wrong.snapshot()).rejects.toBeInstanceOf(TorrentClientAuthError);
  });

  it('a real refusal of add is a typed error', async () => {
    emulator.faults.add = 'fail';
    await expect(recorded().client.add(`magnet:?xt=urn:btih:${v1().infohash}`)).rejects.toBeInstanceOf(
      TorrentAddRefusedError,
    );
  });
});

describe.each<Profile>(['4.6', '5.1'])('qBittorrent %s: Ok./Fails. and the SID cookie', (profile) => {
  beforeEach(() => start(profile));

  it('logs in with Ok., sends SID back, a duplicate add (Fails.) of a present torrent is success', async () => {
    const { client, exchanges } = recorded();
    const h = v1();
    await client.add(`magnet:?xt=urn:btih:${h.infohash}`);
    const login = exchanges.find((e) => e.path === '/api/v2/auth/login')!;
    expect([login.status, login.body, login.setCookie[0].split('=')[0]]).toEqual([200, 'Ok.', 'SID']);
    await client.add(`magnet:?xt=urn:btih:${h.infohash}`);
    expect(exchanges.filter((e) => e.path === '/api/v2/torrents/add').map((e) => e.body)).toEqual(['Ok.', 'Fails.']);
  });

  it('Fails. on login is a typed auth error; an API key is refused', async () => {
    await expect(
      recorded({ auth: { kind: 'password', username: 'admin', password: 'x' } }).client.snapshot(),
    ).rejects.toBeInstanceOf(TorrentClientAuthError);
    await expect(recorded({ auth: { kind: 'apiKey', key: API_KEY } }).client.snapshot()).rejects.toBeInstanceOf(
      TorrentClientAuthError,
    );
  });
});

describe.each<Profile>([...PROFILES])('qBittorrent %s: sessions and versions', (profile) => {
  beforeEach(() => start(profile));

  it('renews the session once when the server forgets it, reads the version once and logs it', async () => {
    const lines: string[] = [];
    const { client, exchanges } = recorded({ log: createLogger({}, { write: (l) => lines.push(l) }) });
    await client.snapshot();
    emulator.setProfile(profile); // drops every session
    await client.snapshot();
    expect(exchanges.filter((e) => e.path === '/api/v2/auth/login')).toHaveLength(2);
    expect(exchanges.filter((e) => e.path === '/api/v2/app/webapiVersion')).toHaveLength(1);
    expect(lines.filter((l) => l.includes('torrent_client_version'))).toHaveLength(1);
  });

  it('answers 405 to a wrong method and 400 to a delete without deleteFiles', async () => {
    const { client, exchanges } = recorded();
    await client.snapshot();
    const cookie = exchanges.find((e) => e.cookie)!.cookie!;
    expect((await fetch(`${url}/api/v2/torrents/add`, { headers: { cookie } })).status).toBe(405);
    const del = await fetch(`${url}/api/v2/torrents/delete`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'hashes=all',
    });
    expect(del.status).toBe(400);
  });
});

describe('versions', () => {
  it('refuses a Web API older than the oldest supported, clearly', async () => {
    await start('4.6');
    const old: typeof fetch = async (input, init) =>
      new URL(String(input)).pathname === '/api/v2/app/webapiVersion' ? new Response('2.2.0') : fetch(input, init);
    const client = new QBittorrentClient({
      baseUrl: url,
      auth: { kind: 'password', username: 'admin', password: 'pw' },
      fetch: old,
    });
    const err = await client.snapshot().catch((e) => e);
    expect(err).toBeInstanceOf(TorrentClientVersionError);
    expect(err.message).toMatch(/2\.2\.0 is older than 2\.8\.3/);
  });
});

describe('npm start with your own client (tools/stack checkTorrentClient)', () => {
  it('is used only when URL and a password or API key are given', () => {
    expect(torrentClientConfigured({})).toBe(false);
    expect(torrentClientConfigured({ TORRENT_CLIENT_URL: 'http://nas:8080' })).toBe(false);
    expect(torrentClientConfigured({ TORRENT_CLIENT_URL: 'http://nas:8080', TORRENT_CLIENT_API_KEY: API_KEY })).toBe(
      true,
    );
  });

  it('says the version and that the login worked, or clearly why not', async () => {
    await start('5.2');
    const lines: string[] = [];
    expect(
      await checkTorrentClient({ TORRENT_CLIENT_URL: url, TORRENT_CLIENT_API_KEY: API_KEY }, (l) => lines.push(l)),
    ).toBe(true);
    expect(lines[0]).toMatch(/Web API 2\.15\.1, API key accepted, 0 torrents in category torrent-scan-sync/);
    expect(
      await checkTorrentClient({ TORRENT_CLIENT_URL: url, TORRENT_CLIENT_PASSWORD: 'wrong' }, (l) => lines.push(l)),
    ).toBe(false);
    // 5.2 answers 401 to a wrong password, as it does to a Host/Referer mismatch: the message names both.
    expect(lines[1]).toMatch(/FAILED the check with user admin: .*Host\/Referer.*username or password.*next try at/);
    expect(
      await checkTorrentClient({ TORRENT_CLIENT_URL: url, TORRENT_CLIENT_API_KEY: 'nope' }, (l) => lines.push(l)),
    ).toBe(false);
    expect(lines[2]).toMatch(/settings refused: .*TORRENT_CLIENT_API_KEY/);
  });
});

import { randomBytes } from 'node:crypto';
import { Profile, QbittorrentEmulator } from '../../../emulator/qbittorrent/emulator';

/**
 * The emulator answers as qBittorrent's own WebUI sources say (issue 41), for
 * the endpoints our client uses: src/webui/webapplication.cpp (the checks
 * before an action), src/webui/api/torrentscontroller.cpp (add, delete),
 * src/webui/api/synccontroller.cpp (maindata), releases 4.6.7, 5.1.4, 5.2.3.
 * Raw HTTP, no client: what a caller sees on the wire.
 */

let emulator: QbittorrentEmulator;
let url: string;
const API_KEY = 'qbt_AbCdEf0123456789';
async function start(profile: Profile) {
  emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile, apiKey: API_KEY });
  url = await emulator.listen();
}
afterEach(() => emulator?.close());

const hex = (n: number) => randomBytes(n).toString('hex');
const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

async function login(): Promise<string> {
  const res = await fetch(`${url}/api/v2/auth/login`, form({ username: 'admin', password: 'pw' }));
  return res.headers.getSetCookie()[0].split(';')[0];
}

async function call(path: string, init: RequestInit & { cookie?: string } = {}) {
  const headers = { ...(init.headers as Record<string, string>), ...(init.cookie ? { cookie: init.cookie } : {}) };
  const res = await fetch(`${url}${path}`, { ...init, headers });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

describe('without a session: 403 on every profile, 5.2 included', () => {
  it.each<Profile>(['4.6', '5.1', '5.2'])('%s: no cookie, a stale cookie, a wrong API key', async (profile) => {
    await start(profile);
    expect(await call('/api/v2/torrents/info')).toMatchObject({ status: 403, text: 'Forbidden' });
    expect((await call('/api/v2/sync/maindata', { cookie: 'QBT_SID_1=nope; SID=nope' })).status).toBe(403);
    const wrongKey = await call('/api/v2/app/webapiVersion', { headers: { authorization: 'Bearer qbt_wrong' } });
    expect(wrongKey.status).toBe(403);
    // Even a path no client has: the session is checked before the endpoint.
    expect((await call('/api/v2/torrents/nothing')).status).toBe(403);
  });

  it('5.2: the right API key works without a login; with a key, auth/* is 403', async () => {
    await start('5.2');
    const key = { authorization: `Bearer ${API_KEY}` };
    expect(await call('/api/v2/app/webapiVersion', { headers: key })).toMatchObject({ status: 200, text: '2.15.1' });
    expect(
      (await call('/api/v2/auth/login', { ...form({ username: 'admin', password: 'pw' }), headers: key })).status,
    ).toBe(403);
  });
});

describe('the CSRF and Host checks apply to every call, not only login', () => {
  beforeEach(() => start('5.1'));

  it('a Referer or Origin naming another host:port is 401, with a valid session too', async () => {
    const cookie = await login();
    expect((await call('/api/v2/torrents/info', { cookie })).status).toBe(200);
    expect(await call('/api/v2/torrents/info', { cookie, headers: { referer: 'http://evil.example/' } })).toMatchObject(
      {
        status: 401,
        text: 'Unauthorized',
      },
    );
    expect((await call('/api/v2/torrents/info', { cookie, headers: { origin: 'http://evil.example' } })).status).toBe(
      401,
    );
    // Origin is read before Referer: a right Origin with a wrong Referer passes.
    const host = new URL(url).host;
    const both = { origin: `http://${host}`, referer: 'http://evil.example/' };
    expect((await call('/api/v2/torrents/info', { cookie, headers: both })).status).toBe(200);
  });

  it('a Host naming another port is 401 (validateHostHeader)', async () => {
    const cookie = await login();
    const res = await new Promise<number>((resolve, reject) => {
      const u = new URL(url);
      // fetch will not let us set Host: a raw request does.
      void import('node:http').then((http) =>
        http
          .request(
            { host: u.hostname, port: u.port, path: '/api/v2/torrents/info', headers: { host: '127.0.0.1:1', cookie } },
            (r) => resolve(r.statusCode ?? 0),
          )
          .on('error', reject)
          .end(),
      );
    });
    expect(res).toBe(401);
  });

  it('5.2 skips the CSRF check for a call with an API key', async () => {
    await emulator.close();
    await start('5.2');
    const headers = { authorization: `Bearer ${API_KEY}`, referer: 'http://elsewhere.example/' };
    expect((await call('/api/v2/app/webapiVersion', { headers })).status).toBe(200);
  });
});

describe('unknown endpoints and methods', () => {
  it('5.2: an action its scope has not is 404 "Endpoint does not exist"; 4.x/5.1 say "Not Found"', async () => {
    await start('5.2');
    let cookie = await login();
    expect(await call('/api/v2/torrents/nothing', { cookie })).toMatchObject({
      status: 404,
      text: 'Endpoint does not exist',
    });
    expect(await call('/api/v2/torrents/pause', { ...form({ hashes: 'all' }), cookie })).toMatchObject({
      status: 404,
      text: 'Endpoint does not exist',
    });
    expect(await call('/api/v2/nothing/info', { cookie })).toMatchObject({ status: 404, text: 'Not Found' });
    await emulator.close();
    await start('4.6');
    cookie = await login();
    expect(await call('/api/v2/torrents/stop', { ...form({ hashes: 'all' }), cookie })).toMatchObject({
      status: 404,
      text: 'Not Found',
    });
  });

  it('torrents/info and sync/maindata answer POST too (its body is the parameters); PUT is 405', async () => {
    await start('5.2');
    const cookie = await login();
    emulator.addTorrent({ kind: 'v1', category: 'a' });
    emulator.addTorrent({ kind: 'v1', category: 'b' });
    const posted = await call('/api/v2/torrents/info', { ...form({ category: 'a' }), cookie });
    expect(posted.status).toBe(200);
    expect((JSON.parse(posted.text) as unknown[]).length).toBe(1);
    expect((await call('/api/v2/sync/maindata', { ...form({ rid: '0' }), cookie })).status).toBe(200);
    expect((await call('/api/v2/torrents/info', { method: 'PUT', cookie })).status).toBe(405);
    expect((await call('/api/v2/torrents/add', { cookie })).status).toBe(405);
  });
});

describe('login', () => {
  it('a login that already has a session succeeds at once, whatever the credentials', async () => {
    await start('5.2');
    const cookie = await login();
    const again = await call('/api/v2/auth/login', { ...form({ username: 'x', password: 'y' }), cookie });
    expect(again.status).toBe(204);
    expect(emulator.authState.failedLogins.size).toBe(0);
  });

  it('a banned address is told why, in qBittorrent words', async () => {
    await start('5.2');
    for (let i = 0; i < 5; i++) await call('/api/v2/auth/login', form({ username: 'admin', password: 'x' }));
    expect(await call('/api/v2/auth/login', form({ username: 'admin', password: 'pw' }))).toMatchObject({
      status: 403,
      text: 'Your IP address has been banned after too many failed authentication attempts.',
    });
  });
});

describe('torrents/add', () => {
  it('5.2: a magnet is 200 with pending_count 0; a URL being fetched is 202; nothing added is 409 "Conflict"', async () => {
    await start('5.2');
    const cookie = await login();
    const h = hex(20);
    const added = await call('/api/v2/torrents/add', { ...form({ urls: `magnet:?xt=urn:btih:${h}` }), cookie });
    expect(added.status).toBe(200);
    expect(added.json()).toEqual({ added_torrent_ids: [h], failure_count: 0, pending_count: 0, success_count: 1 });
    const fetched = await call('/api/v2/torrents/add', {
      ...form({ urls: 'http://tracker.example/x.torrent' }),
      cookie,
    });
    expect(fetched.status).toBe(202);
    expect(fetched.json()).toMatchObject({ pending_count: 1, success_count: 0 });
    expect(await call('/api/v2/torrents/add', { ...form({ urls: `magnet:?xt=urn:btih:${h}` }), cookie })).toMatchObject(
      { status: 409, text: 'Conflict' },
    );
  });

  it('5.2: each URL counts on its own (one new, one duplicate, one broken: 200, failure_count 2)', async () => {
    await start('5.2');
    const cookie = await login();
    const old = emulator.addTorrent({ kind: 'v1' }).hash;
    const h = hex(20);
    const urls = [`magnet:?xt=urn:btih:${h}`, `magnet:?xt=urn:btih:${old}`, 'magnet:?xt=urn:btih:zz'].join('\n');
    const res = await call('/api/v2/torrents/add', { ...form({ urls }), cookie });
    expect([res.status, res.json()]).toEqual([
      200,
      { added_torrent_ids: [h], failure_count: 2, pending_count: 0, success_count: 1 },
    ]);
  });

  it('up to 5.1: Ok. when anything was added (partial success), Fails. only when nothing was', async () => {
    await start('5.1');
    const cookie = await login();
    const old = emulator.addTorrent({ kind: 'v1' }).hash;
    const urls = [`magnet:?xt=urn:btih:${hex(20)}`, `magnet:?xt=urn:btih:${old}`].join('\n');
    expect((await call('/api/v2/torrents/add', { ...form({ urls }), cookie })).text).toBe('Ok.');
    expect((await call('/api/v2/torrents/add', { ...form({ urls: `magnet:?xt=urn:btih:${old}` }), cookie })).text).toBe(
      'Fails.',
    );
  });
});

describe('torrents/delete: hashes and deleteFiles are both required; deleteFiles is read leniently', () => {
  beforeEach(() => start('5.2'));

  it('a missing deleteFiles is 400 naming it; any value keeps going (not "true" keeps the files)', async () => {
    const cookie = await login();
    const t = emulator.addTorrent({ kind: 'v1' });
    expect(await call('/api/v2/torrents/delete', { ...form({ hashes: t.hash }), cookie })).toMatchObject({
      status: 400,
      text: 'Missing required parameters: deleteFiles',
    });
    expect(emulator.torrents.has(t.hash)).toBe(true);
    const res = await call('/api/v2/torrents/delete', {
      ...form({ hashes: t.hash.toUpperCase(), deleteFiles: '1' }),
      cookie,
    });
    expect(res.status).toBe(200);
    expect(emulator.torrents.has(t.hash)).toBe(false);
  });
});

describe('sync/maindata', () => {
  beforeEach(() => start('5.2'));

  it('entries carry no hash (the key is the id); full_update only when true; nothing changed: no torrents key', async () => {
    const cookie = await login();
    const t = emulator.addTorrent({ kind: 'v1', progress: 0.1 });
    const first = (await call('/api/v2/sync/maindata?rid=0', { cookie })).json();
    expect(first).toMatchObject({ rid: 1, full_update: true });
    const entry = (first.torrents as Record<string, Record<string, unknown>>)[t.hash];
    expect(entry).toMatchObject({ name: t.name, infohash_v1: t.infohash_v1 });
    expect(entry).not.toHaveProperty('hash');
    emulator.update(t.hash, { progress: 0.5 });
    const second = (await call('/api/v2/sync/maindata?rid=1', { cookie })).json();
    expect(second).toEqual({ rid: 2, torrents: { [t.hash]: { progress: 0.5 } } });
    expect((await call('/api/v2/sync/maindata?rid=2', { cookie })).json()).toEqual({ rid: 3 });
  });

  it('each session counts its own rids; a rid that is neither the last sent nor the last accepted is a full update', async () => {
    const a = await login();
    const b = await login();
    emulator.addTorrent({ kind: 'v1' });
    expect((await call('/api/v2/sync/maindata?rid=0', { cookie: a })).json().rid).toBe(1);
    expect((await call('/api/v2/sync/maindata?rid=0', { cookie: b })).json().rid).toBe(1);
    expect((await call('/api/v2/sync/maindata?rid=1', { cookie: a })).json()).toEqual({ rid: 2 });
    // A rid this session never sent (another session's, or an old one) gets everything again.
    expect((await call('/api/v2/sync/maindata?rid=7', { cookie: a })).json()).toMatchObject({
      rid: 3,
      full_update: true,
    });
  });

  it('after a full update, the older accepted rid gets every torrent again and loses the removals before it', async () => {
    const cookie = await login();
    const keep = emulator.addTorrent({ kind: 'v1' });
    const gone = emulator.addTorrent({ kind: 'v1' });
    await call('/api/v2/sync/maindata?rid=0', { cookie }); // 1
    await call('/api/v2/sync/maindata?rid=1', { cookie }); // 2: rid 1 accepted
    emulator.remove(gone.hash);
    // Another poller of this session (one API key shared by containers) asks with a stale rid: a full update (3).
    expect((await call('/api/v2/sync/maindata?rid=0', { cookie })).json()).toMatchObject({ rid: 3, full_update: true });
    // A poller re-sending rid 1 (the accepted one: its answer 2 was lost) gets no "full", every torrent, and no
    // word of the removal. Our client never re-sends a rid after a failure (it starts over from 0).
    const stale = (await call('/api/v2/sync/maindata?rid=1', { cookie })).json();
    expect(stale).not.toHaveProperty('full_update');
    expect(Object.keys(stale.torrents as object)).toEqual([keep.hash]);
    expect(stale).not.toHaveProperty('torrents_removed');
  });
});

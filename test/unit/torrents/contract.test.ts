import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { QbittorrentEmulator, Profile } from '../../../emulator/qbittorrent/emulator';
import {
  TorrentAddRefusedError,
  TorrentClientAuthError,
  TorrentLoginDeferredError,
} from '../../../lib/torrents/errors';
import { BAN_WAIT_MS, FIRST_WAIT_MS, loginGateProblem, MemoryLoginGateStore } from '../../../lib/torrents/login-gate';
import { DEFAULT_CATEGORY, QBittorrentClient, QBittorrentOptions } from '../../../lib/torrents/qbittorrent';
import { randomBytes } from 'node:crypto';

/**
 * The contract points real qBittorrent has and the emulator learned (issue 31):
 * 5.2's add codes, the ban after 5 refused logins and our back-off that never
 * reaches it, a WebUI under a path behind a proxy, a 401 at login from the
 * Host/Referer check, a restart's checkingResumeData. Real HTTP against the
 * in-process emulator; no stack.
 */

let emulator: QbittorrentEmulator;
let url: string;
const servers: http.Server[] = [];
async function start(profile: Profile) {
  emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile });
  url = await emulator.listen();
}
afterEach(async () => {
  await emulator?.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

const hex = (n: number) => randomBytes(n).toString('hex');
const client = (opts: Partial<QBittorrentOptions> = {}) =>
  new QBittorrentClient({ baseUrl: url, auth: { kind: 'password', username: 'admin', password: 'pw' }, ...opts });

describe('5.2 torrents/add: 200 + JSON is added; 409 means nothing was added, and the torrent decides', () => {
  beforeEach(() => start('5.2'));

  it('a refused torrent (409, not in the client) is a refusal, never "added"', async () => {
    emulator.faults.add = 'fail';
    await expect(client().add(`magnet:?xt=urn:btih:${hex(20)}`)).rejects.toBeInstanceOf(TorrentAddRefusedError);
    expect(emulator.calls.get('/api/v2/torrents/info')).toBeGreaterThan(0); // it looked before deciding
  });

  it('a duplicate (409, present) counts as added; a new one is 200', async () => {
    const h = hex(20);
    await client().add(`magnet:?xt=urn:btih:${h}`);
    expect(emulator.torrents.get(h)?.category).toBe(DEFAULT_CATEGORY);
    await expect(client().add(`magnet:?xt=urn:btih:${h}`)).resolves.toBeUndefined();
  });

  it('a 409 for a hybrid whose id already switched to the truncated v2 is found by its v1', async () => {
    const t = emulator.addTorrent({ kind: 'hybrid', category: DEFAULT_CATEGORY });
    await expect(client().add(`magnet:?xt=urn:btih:${t.infohash_v1}`)).resolves.toBeUndefined();
  });
});

describe('refused logins: the client bans at 5; our gate allows at most 2 an hour and never gets there', () => {
  beforeEach(() => start('5.2'));

  it('the emulator bans an address after 5 refused logins (403), as qBittorrent does', async () => {
    const login = (password: string) =>
      fetch(`${url}/api/v2/auth/login`, { method: 'POST', body: new URLSearchParams({ username: 'admin', password }) });
    for (let i = 0; i < 5; i++) expect((await login('wrong')).status).toBe(401);
    expect((await login('pw')).status).toBe(403); // even the right password, for BanDuration
  });

  it('a poll every minute for 6 hours with a wrong password: at most 2 refused logins in any hour, never banned', async () => {
    let now = Date.parse('2026-12-05T00:00:00Z');
    const gate = new MemoryLoginGateStore();
    const attempts: number[] = [];
    const messages = new Set<string>();
    for (let minute = 0; minute < 6 * 60; minute++, now += 60_000) {
      // A new container now and then: the gate, not the container, remembers.
      const c = client({
        auth: { kind: 'password', username: 'admin', password: 'wrong' },
        loginGate: gate,
        now: () => now,
      });
      const before = emulator.calls.get('/api/v2/auth/login') ?? 0;
      const err = await c.snapshot().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TorrentClientAuthError);
      messages.add((err as Error).message.replace(/\d{4}-[\d-]+T[\d:.]+Z/, '<t>'));
      if ((emulator.calls.get('/api/v2/auth/login') ?? 0) > before) attempts.push(now);
    }
    for (const t of attempts) expect(attempts.filter((a) => a >= t && a < t + 3_600_000).length).toBeLessThanOrEqual(2);
    expect(attempts.length).toBeLessThan(5);
    expect([...messages].some((m) => m.startsWith('credentials refused, next try at <t>'))).toBe(true);
    expect(await loginGateProblem(gate, () => now)).toMatch(/^credentials refused, next try at \d{4}-/);
    // Never banned: the right password still logs in at once (new credentials may try before the wait is over).
    await expect(client({ loginGate: gate, now: () => now }).snapshot()).resolves.toMatchObject({ full: true });
    expect(gate.state).toBeUndefined(); // a success clears the gate
  });

  it('ten containers at the moment the gate opens spend ONE login between them', async () => {
    let now = 0;
    const gate = new MemoryLoginGateStore();
    const wrong = () =>
      client({ auth: { kind: 'password', username: 'admin', password: 'wrong' }, loginGate: gate, now: () => now });
    await expect(wrong().snapshot()).rejects.toBeInstanceOf(TorrentClientAuthError);
    now += FIRST_WAIT_MS;
    const before = emulator.calls.get('/api/v2/auth/login')!;
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => wrong().snapshot()));
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect(emulator.calls.get('/api/v2/auth/login')! - before).toBe(1);
    expect(
      results.filter((r) => (r as PromiseRejectedResult).reason instanceof TorrentLoginDeferredError),
    ).toHaveLength(9);
  });

  it('a ban (403) closes the gate for the ban hour, for every credential', async () => {
    let now = 0;
    const gate = new MemoryLoginGateStore();
    for (let i = 0; i < 5; i++)
      await fetch(`${url}/api/v2/auth/login`, {
        method: 'POST',
        body: new URLSearchParams({ username: 'admin', password: 'x' }),
      });
    await expect(client({ loginGate: gate, now: () => now }).snapshot()).rejects.toThrow(/banned/);
    now += BAN_WAIT_MS - 1;
    const before = emulator.calls.get('/api/v2/auth/login')!;
    await expect(client({ loginGate: gate, now: () => now }).snapshot()).rejects.toBeInstanceOf(
      TorrentLoginDeferredError,
    );
    expect(emulator.calls.get('/api/v2/auth/login')).toBe(before);
    expect(await loginGateProblem(gate, () => now)).toMatch(/^banned by the client, next try at/);
  });
});

/**
 * A reverse proxy serving the emulator under /qbt/. qBittorrent's NGINX guide sends Host as the
 * client's own ($proxy_host) and the public one as X-Forwarded-Host, with the WebUI's reverse proxy
 * support trusting the proxy; without X-Forwarded-Host the Referer names the proxy and the CSRF check
 * refuses every call. (A proxy passing its own Host fails the Host check: its port is not the client's.)
 */
async function proxyUnderPath(opts: { forwardHost: boolean }): Promise<string> {
  const target = new URL(url);
  const server = http.createServer((req, res) => {
    if (!req.url?.startsWith('/qbt/')) {
      res.writeHead(404).end('not under /qbt/');
      return;
    }
    const headers: http.OutgoingHttpHeaders = { ...req.headers, host: target.host }; // proxy_set_header Host $proxy_host
    if (opts.forwardHost) headers['x-forwarded-host'] = req.headers.host; // proxy_set_header X-Forwarded-Host $http_host
    const up = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url.slice(4), headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(up);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/qbt/`;
}

describe('a WebUI behind a reverse proxy under a path', () => {
  beforeEach(() => start('5.1'));

  it('keeps the path on every call (login, version, add, maindata)', async () => {
    emulator.auth.reverse_proxy = true;
    const base = await proxyUnderPath({ forwardHost: true });
    for (const baseUrl of [base, base.slice(0, -1)]) {
      const c = client({ baseUrl });
      const h = hex(20);
      await c.add(`magnet:?xt=urn:btih:${h}`);
      expect((await c.snapshot()).present.map((t) => t.hash)).toContain(h);
    }
  });

  it('a 401 at login from the Host/Referer check says so (not "wrong password")', async () => {
    const base = await proxyUnderPath({ forwardHost: false });
    const err = await client({ baseUrl: base })
      .snapshot()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TorrentClientAuthError);
    expect((err as Error).message).toMatch(/Host\/Referer\/Origin.*reverse proxy/);
  });
});

describe('the emulator restarts like real 4.5.2', () => {
  beforeEach(() => start('4.6'));

  it('sessions are lost, torrents report checkingResumeData with progress 0, then their own state again', async () => {
    const t = emulator.addTorrent({ kind: 'v1', state: 'uploading', progress: 1, category: DEFAULT_CATEGORY });
    const c = client();
    await c.snapshot();
    emulator.restart(200);
    const during = await c.snapshot(); // the old session is refused: the client logs in again
    expect(during.full).toBe(true);
    expect(during.present.find((x) => x.hash === t.hash)).toMatchObject({ state: 'checkingResumeData', progress: 0 });
    await new Promise((r) => setTimeout(r, 300));
    expect((await c.snapshot()).changed.find((x) => x.hash === t.hash)).toMatchObject({
      state: 'uploading',
      progress: 1,
    });
  });
});

describe('a connection the client closed between two calls', () => {
  beforeEach(() => start('4.6'));

  it('a GET is tried once more on a new connection; a POST is not (it may have landed)', async () => {
    let drops = 0;
    const dropping =
      (methods: string[]): typeof fetch =>
      async (input, init) => {
        if (methods.includes(init?.method ?? 'GET') && drops++ % 2 === 0)
          throw new TypeError('fetch failed', {
            cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
          });
        return fetch(input, init);
      };
    await expect(client({ fetch: dropping(['GET']) }).snapshot()).resolves.toMatchObject({ full: true });
    drops = 0;
    await expect(client({ fetch: dropping(['POST']) }).snapshot()).rejects.toThrow(/other side closed/);
  });
});

describe('the pass-through to a real client', () => {
  beforeEach(() => start('5.1'));

  it('answers 502 naming the upstream while it is down (a restart), as a reverse proxy does', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r)); // nothing listens there now
    const upstream = `http://127.0.0.1:${port}`;
    const put = await fetch(`${url}/emulator/upstream`, {
      method: 'PUT',
      body: JSON.stringify({ url: upstream, username: 'admin', password: 'real' }),
    });
    expect(put.status).toBe(200);
    const res = await fetch(`${url}/api/v2/app/webapiVersion`);
    expect(res.status).toBe(502);
    expect(await res.text()).toContain(upstream);
    await expect(client().snapshot()).rejects.toThrow(/answered 502/);
  });
});

describe('the client meets 5.2 as the official sources answer (issue 41)', () => {
  beforeEach(() => start('5.2'));
  const KEY = 'qbt_AbCdEf0123456789';
  async function startWithKey() {
    await emulator.close();
    emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile: '5.2', apiKey: KEY });
    url = await emulator.listen();
  }

  it('a forgotten session is 403 on 5.2 too: the client logs in again and the poll goes on', async () => {
    const statuses: Array<[string, number]> = [];
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      statuses.push([new URL(String(input)).pathname, res.status]);
      return res;
    };
    const c = client({ fetch: recording });
    await c.snapshot();
    emulator.restart(0); // sessions lost
    await expect(c.snapshot()).resolves.toMatchObject({ full: true });
    expect(statuses.slice(-3)).toEqual([
      ['/api/v2/sync/maindata', 403],
      ['/api/v2/auth/login', 204],
      ['/api/v2/sync/maindata', 200],
    ]);
  });

  it('maindata entries without hash and without full_update: the changed torrent keeps its id', async () => {
    const t = emulator.addTorrent({ kind: 'v1', category: DEFAULT_CATEGORY, progress: 0.1 });
    const c = client();
    await c.snapshot();
    emulator.update(t.hash, { progress: 0.6 });
    const next = await c.snapshot();
    expect(next.full).toBe(false);
    expect(next.changed).toEqual([expect.objectContaining({ hash: t.hash, progress: 0.6, name: t.name })]);
  });

  it('a wrong API key (403) is named as such', async () => {
    await startWithKey();
    const err = await client({ auth: { kind: 'apiKey', key: 'qbt_wrongwrongwrong' } })
      .snapshot()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TorrentClientAuthError);
    expect((err as Error).message).toMatch(/answered 403: the API key was refused .*TORRENT_CLIENT_API_KEY/);
  });

  it('an API key behind a proxy that passes its own Host (401 on every call) names the Host check', async () => {
    await startWithKey();
    const target = new URL(url);
    const proxy = http.createServer((req, res) => {
      const up = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(up);
    });
    servers.push(proxy);
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const err = await client({
      baseUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/`,
      auth: { kind: 'apiKey', key: KEY },
    })
      .snapshot()
      .catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/answered 401: the client refused our Host/);
  });

  it('202 (something pending) is an add that went through', async () => {
    const pending: typeof fetch = async (input, init) =>
      new URL(String(input)).pathname === '/api/v2/torrents/add'
        ? new Response(
            JSON.stringify({ added_torrent_ids: [], failure_count: 0, pending_count: 1, success_count: 0 }),
            { status: 202 },
          )
        : fetch(input, init);
    await expect(client({ fetch: pending }).add(`magnet:?xt=urn:btih:${hex(20)}`)).resolves.toBeUndefined();
    expect(emulator.calls.get('/api/v2/torrents/info')).toBeUndefined(); // no look-up needed
  });
});

describe("the disk's figures and start/resume (the disk guard: lib/downloads/disk-guard.ts)", () => {
  const client = () =>
    new QBittorrentClient({ baseUrl: url, auth: { kind: 'password', username: 'admin', password: 'pw' } });

  it.each(['5.2', '4.6'] as const)(
    '%s: free space from a full update, then from a delta that carries only the change; start or resume by version',
    async (profile) => {
      await start(profile);
      const c = client();
      const t = emulator.addTorrent({ kind: 'v1', category: DEFAULT_CATEGORY, progress: 0.5 });
      emulator.update(t.hash, { size: 2048, amount_left: 1024 });
      const first = await c.snapshot();
      expect(first).toMatchObject({ full: true, free_space_bytes: 1024 ** 4 });
      expect(first.present[0]).toMatchObject({ size: 2048, amount_left: 1024 });
      emulator.setFreeSpace(5);
      expect(await c.snapshot()).toMatchObject({ full: false, changed: [], free_space_bytes: 5 });
      // A delta without server_state keeps the last known figure.
      expect(await c.snapshot()).toMatchObject({ full: false, free_space_bytes: 5 });

      await c.stop([t.hash]);
      expect(emulator.torrents.get(t.hash)!.state).toBe(profile === '5.2' ? 'stoppedDL' : 'pausedDL');
      await c.start([t.hash]);
      expect(emulator.torrents.get(t.hash)!.state).toBe('downloading');
      // The other version's name for the call is not there.
      const other = profile === '5.2' ? 'resume' : 'start';
      const login = await fetch(`${url}/api/v2/auth/login`, {
        method: 'POST',
        body: new URLSearchParams({ username: 'admin', password: 'pw' }),
      });
      const cookie = login.headers.get('set-cookie')!.split(';')[0];
      const res = await fetch(`${url}/api/v2/torrents/${other}`, {
        method: 'POST',
        headers: { cookie },
        body: new URLSearchParams({ hashes: t.hash }),
      });
      expect(res.status).toBe(404);
    },
  );

  it('a figure that is not a byte count (negative, fractional, a string, past 2^53) is no figure at all', async () => {
    await start('5.2');
    for (const bogus of [-1, 1.5, '5', 2 ** 60, null]) {
      emulator.setFreeSpace(bogus as number);
      expect(await client().snapshot()).not.toHaveProperty('free_space_bytes');
    }
    const t = emulator.addTorrent({ kind: 'v1', category: DEFAULT_CATEGORY });
    emulator.update(t.hash, { size: -5, amount_left: 'x' });
    expect((await client().snapshot()).present[0]).not.toHaveProperty('size');
  });
});

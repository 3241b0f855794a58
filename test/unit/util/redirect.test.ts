import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../../../lib/log';
import { TBankClient } from '../../../lib/sync/tbank/client';
import { TBankError } from '../../../lib/sync/tbank/errors';
import { TorrentClientError } from '../../../lib/torrents/errors';
import { QbittorrentSession } from '../../../lib/torrents/qbittorrent-session';
import { redirectTarget } from '../../../lib/util/redirect';

/**
 * Our clients of the torrent client and of T-Bank never follow a redirect: a
 * server (or whoever sits in front of it) answering 307 to another origin
 * would otherwise get the login form with the password again, or the T-Bank
 * bearer token, posted to that origin. Two loopback servers: the configured
 * one redirects, the other counts what reaches it.
 */

interface Seen {
  method?: string;
  url?: string;
  body: string;
  authorization?: string;
}

async function server(handle: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) {
  const seen: Seen[] = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, body, authorization: req.headers.authorization });
      handle(req, res, body);
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((resolve) => srv.close(() => resolve())) };
}

let elsewhere: Awaited<ReturnType<typeof server>>;
let redirecting: Awaited<ReturnType<typeof server>>;

beforeAll(async () => {
  elsewhere = await server((_req, res) => res.writeHead(200, { 'set-cookie': 'SID=stolen' }).end('Ok.'));
  redirecting = await server((req, res) =>
    res.writeHead(Number(req.headers['x-status'] ?? 307), { location: `${elsewhere.url}${req.url}` }).end(),
  );
});
afterAll(async () => {
  await elsewhere.close();
  await redirecting.close();
});
beforeEach(() => {
  elsewhere.seen.length = 0;
  redirecting.seen.length = 0;
});

it('the qBittorrent client posts its login once, to its own URL, and refuses the 307 to another origin', async () => {
  const session = new QbittorrentSession({
    baseUrl: redirecting.url,
    auth: { kind: 'password', username: 'admin', password: 'the-password-0001' },
    now: () => Date.now(),
    ready: async () => undefined,
  });
  const refusal = session.call('GET', '/api/v2/torrents/info');
  await expect(refusal).rejects.toThrow(TorrentClientError);
  await expect(refusal).rejects.toThrow(
    `POST /api/v2/auth/login answered 307, a redirect to ${elsewhere.url} (another origin): not followed`,
  );
  expect(redirecting.seen.map((s) => s.url)).toEqual(['/api/v2/auth/login']);
  expect(redirecting.seen[0].body).toContain('the-password-0001');
  expect(elsewhere.seen).toEqual([]);
});

it('the qBittorrent client with an API key refuses a redirect of a call too', async () => {
  const session = new QbittorrentSession({
    baseUrl: redirecting.url,
    auth: { kind: 'apiKey', key: 'qbt_the-api-key-0002' },
    now: () => Date.now(),
    ready: async () => undefined,
  });
  await expect(session.call('POST', '/api/v2/torrents/add', new URLSearchParams({ urls: 'x' }))).rejects.toThrow(
    /answered 307, a redirect to .* \(another origin\): not followed/,
  );
  expect(elsewhere.seen).toEqual([]);
});

it('the T-Bank client sends its token once, to its own URL, and ends the call on a 307', async () => {
  const client = new TBankClient({
    baseUrl: redirecting.url,
    token: 't.the-tbank-token-0003',
    appName: 'test',
    signal: AbortSignal.timeout(10_000),
    remainingMs: () => 10_000,
    log: silentLogger,
    retries: 2,
  });
  const refusal = client.getAccounts();
  await expect(refusal).rejects.toThrow(TBankError);
  await expect(refusal).rejects.toMatchObject({ kind: 'bad-answer', code: 'BAD_UPSTREAM_ANSWER' });
  await expect(refusal).rejects.toThrow(/answered 307, a redirect to .* \(another origin\): not followed/);
  // Not retried either: a redirect is the setting's mistake, not a transient failure.
  expect(redirecting.seen).toHaveLength(1);
  expect(redirecting.seen[0].authorization).toBe('Bearer t.the-tbank-token-0003');
  expect(elsewhere.seen).toEqual([]);
});

it('names where a redirect pointed by its origin only', () => {
  const at = (location?: string) => ({ headers: new Headers(location ? { location } : {}) });
  expect(redirectTarget(at('https://evil.example:8443/x?token=secret'), 'https://qbt.example.internal/')).toBe(
    'https://evil.example:8443 (another origin)',
  );
  expect(redirectTarget(at('/api/v2/auth/login/'), 'https://qbt.example.internal/qbt/')).toBe(
    'https://qbt.example.internal (the same origin)',
  );
  expect(redirectTarget(at(), 'https://qbt.example.internal/')).toBe('nowhere (no Location)');
  expect(redirectTarget(at('http://['), 'https://qbt.example.internal/')).toBe('an unreadable Location');
});

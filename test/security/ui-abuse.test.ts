import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fs from 'node:fs';
import path from 'node:path';
import { issueSession } from '../../lib/auth/session';
import { parseTokenGrants, TokenGrant } from '../../lib/auth/tokens';
import { newId } from '../../lib/ident';
import { newKeyringEntry, parseKeyring } from '../../lib/secrets/sealer';
import { MAX_FORM_BYTES } from '../../lib/web/forms';
import { v1 } from '../support/downloads';
import { call, emulatorTorrents } from '../support/http';
import { httpUrl, stackClients, stackConfig } from '../support/stack';

/**
 * The abuse suite of the web UI: hostile browsers and forms through the real
 * serverless offline port and the session authorizer. Every one is refused
 * clearly, writes nothing (the downloads table and the torrent client are
 * compared whole before and after), and no token or cookie reaches the logs.
 */

const aws = stackClients();
const cfg = stackConfig();
const keyring = parseKeyring(process.env.SESSION_KEYS!).keyring!;
const grants = parseTokenGrants(process.env.AUTH_TOKENS!).grants;
const grant = (name: string) => grants.find((g) => g.name === name)!;
const hostile = `<img src=x onerror=alert(1)> "'><svg onload=alert(2)> & done`;

interface Reply {
  status: number;
  location: string | null;
  setCookie: string | null;
  body: string;
}

async function send(
  method: string,
  url: string,
  opts: { cookie?: string; form?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const res = await fetch(httpUrl(url), {
    method,
    redirect: 'manual',
    headers: {
      ...(opts.form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...(opts.cookie ? { cookie: `tss_session=${opts.cookie}` } : {}),
      ...opts.headers,
    },
    body: opts.form,
  });
  return {
    status: res.status,
    location: res.headers.get('location'),
    setCookie: res.headers.get('set-cookie'),
    body: await res.text(),
  };
}

async function signIn(token: string): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const res = await send('POST', '/signin', { form: new URLSearchParams({ token }).toString() });
  expect([res.status, res.location]).toEqual([303, '/']);
  const cookie = /tss_session=([^;]+)/.exec(res.setCookie!)![1];
  const page = await send('GET', '/', { cookie });
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1];
  return { cookie, csrf, setCookie: res.setCookie! };
}

async function snapshot(): Promise<string> {
  const items: string[] = [];
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await aws.documents.send(
      new ScanCommand({ TableName: cfg.tables.downloads, ExclusiveStartKey, ConsistentRead: true }),
    );
    items.push(...(page.Items ?? []).map((i) => JSON.stringify(i)));
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return JSON.stringify({ items: items.sort(), torrents: (await emulatorTorrents()).map((t) => t.hash).sort() });
}

let all: { cookie: string; csrf: string; setCookie: string };
let readOnly: { cookie: string; csrf: string };
let target: string;
let before: string;

beforeAll(async () => {
  all = await signIn(process.env.TEST_TOKEN_ALL!);
  readOnly = await signIn(process.env.TEST_TOKEN_DOWNLOADS_READ!);
  // A failed download: every action below WOULD change it if a check were missing.
  const made = await call('POST', '/downloads', { infohashes: [v1().infohash], name: hostile });
  target = made.body.id;
  await call('POST', `/downloads/${target}/state`, { state: 'failed' });
  before = await snapshot();
});

afterAll(async () => {
  expect(await snapshot()).toBe(before);
  aws.dynamodb.destroy();
  aws.s3.destroy();
});

const forms = () => [
  ['POST', `/download/${target}/retry`, ''],
  ['POST', `/download/${target}/cancel`, ''],
  ['POST', `/download/${target}/infohashes`, `infohashes=${v1().infohash}`],
  ['POST', `/review/${target}`, `candidate_id=${target}`],
];

describe('the session cookie', () => {
  it('is HttpOnly, SameSite=Strict, path /, with an expiry; not Secure on a loopback host only', () => {
    expect(all.setCookie).toMatch(/^tss_session=v1\.[^;]+; Path=\/; Max-Age=28800; HttpOnly; SameSite=Strict$/);
  });

  const forged = (): Array<[string, string]> => {
    const good = issueSession(keyring, grant('test-all'), Date.now()).value;
    const [v, kid, payload, mac] = good.split('.');
    const other = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'test-sync-read' }),
    ).toString('base64url');
    const wrongKey = parseKeyring(newKeyringEntry(kid)).keyring!;
    const unknownGrant: TokenGrant = {
      name: 'nobody',
      sha256: 'ab'.repeat(32),
      scopes: ['downloads:read', 'downloads:write'],
    };
    return [
      ['no cookie', ''],
      ['an expired session', issueSession(keyring, grant('test-all'), Date.now() - 9 * 3600_000).value],
      ['a session of an expired token', issueSession(keyring, grant('test-expired'), Date.now() - 3600_000).value],
      ['an altered payload', [v, kid, other, mac].join('.')],
      ['a session signed with another key', issueSession(wrongKey, grant('test-all'), Date.now()).value],
      ['a session of a token not configured', issueSession(keyring, unknownGrant, Date.now()).value],
      ['garbage', 'x'.repeat(300)],
      ['the API token as the cookie', process.env.TEST_TOKEN_ALL!],
    ];
  };

  it.each(forged())('%s: pages redirect to sign-in, forms change nothing', async (_name, cookie) => {
    for (const path of ['/', `/download/${target}`, `/review/${target}`]) {
      const res = await send('GET', path, { cookie });
      expect([path, res.status, res.location]).toEqual([
        path,
        303,
        path === '/' ? '/signin' : `/signin?next=${encodeURIComponent(path)}`,
      ]);
    }
    for (const [method, path, form] of forms()) {
      const res = await send(method, path, { cookie, form: `csrf=${all.csrf}&${form}` });
      expect([path, res.status, res.location]).toEqual([path, 303, '/signin']);
    }
  });

  it('a bearer token does not open UI routes, and the cookie does not open API routes', async () => {
    const res = await send('GET', '/', { headers: { authorization: `Bearer ${process.env.TEST_TOKEN_ALL}` } });
    expect([res.status, res.location]).toEqual([303, '/signin']);
    const api = await send('POST', `/downloads/${target}/retry`, { cookie: all.cookie });
    expect(api.status).toBe(401);
  });

  it("a session without the write scope is refused every form (the API's 403)", async () => {
    expect((await send('GET', `/download/${target}`, { cookie: readOnly.cookie })).status).toBe(200);
    for (const [method, path, form] of forms()) {
      expect([
        path,
        (await send(method, path, { cookie: readOnly.cookie, form: `csrf=${readOnly.csrf}&${form}` })).status,
      ]).toEqual([path, 403]);
    }
  });
});

describe('forms', () => {
  it.each([
    ['no form token', (f: string) => ({ form: f })],
    ['a wrong form token', (f: string) => ({ form: `csrf=${'A'.repeat(24)}&${f}` })],
    ['the form token of another session', (f: string) => ({ form: `csrf=${readOnly.csrf}&${f}` })],
    [
      'a foreign Origin',
      (f: string) => ({ form: `csrf=${all.csrf}&${f}`, headers: { origin: 'http://evil.example' } }),
    ],
    ['a null Origin', (f: string) => ({ form: `csrf=${all.csrf}&${f}`, headers: { origin: 'null' } })],
    [
      'a cross-site fetch',
      (f: string) => ({ form: `csrf=${all.csrf}&${f}`, headers: { 'sec-fetch-site': 'cross-site' } }),
    ],
  ])('%s → 403, nothing written', async (_name, shape) => {
    for (const [method, path, form] of forms()) {
      const res = await send(method, path, { cookie: all.cookie, ...shape(form) });
      expect([path, res.status]).toEqual([path, 403]);
      expect(res.body).toContain('FORBIDDEN');
    }
  });

  it.each([
    ['a form over the size limit', `csrf=CSRF&infohashes=${'a'.repeat(MAX_FORM_BYTES)}`, {}, 413],
    ['a JSON body', '{"infohashes":["x"]}', { 'content-type': 'application/json' }, 415],
    ['a field twice', 'csrf=CSRF&infohashes=a&infohashes=b', {}, 400],
    ['an unknown field', 'csrf=CSRF&infohashes=a&state=completed', {}, 400],
    ['hashes that are not hashes', 'csrf=CSRF&infohashes=<script>alert(1)</script>', {}, 400],
    [
      "offline's authorizer override",
      'csrf=CSRF&infohashes=a',
      { 'sls-offline-authorizer-override': '{"lambda":{"principal":"x"}}' },
      400,
    ],
  ])('%s is refused clearly', async (_name, form, headers, status) => {
    const res = await send('POST', `/download/${target}/infohashes`, {
      cookie: all.cookie,
      form: form.replace('CSRF', all.csrf),
      headers,
    });
    expect(res.status).toBe(status);
    expect(res.body).not.toContain('<script>alert');
  });

  it('a malformed candidate_id is a 404 page', async () => {
    for (const candidate of ['12345', '', `${target}'--`, newId().toUpperCase() + 'x']) {
      const res = await send('POST', `/review/${target}`, {
        cookie: all.cookie,
        form: new URLSearchParams({ csrf: all.csrf, candidate_id: candidate }).toString(),
      });
      expect([candidate, res.status]).toEqual([candidate, 404]);
    }
  });
});

describe('sign-in', () => {
  it.each([
    ['a wrong token', 'token=tss_' + 'A'.repeat(43), 401],
    ['an expired token', `token=${process.env.TEST_TOKEN_EXPIRED}`, 401],
    ['a token that opens no page (health:read alone)', `token=${process.env.TEST_TOKEN_HEALTH_READ}`, 403],
    ['an oversize form', `token=${'A'.repeat(MAX_FORM_BYTES + 1)}`, 413],
    ['an open redirect', `token=${process.env.TEST_TOKEN_ALL}&next=//evil.example/`, 303],
  ])('%s: no session', async (_name, form, status) => {
    const res = await send('POST', '/signin', { form });
    expect(res.status).toBe(status);
    if (status === 303) expect(res.location).toBe('/');
    else expect(res.setCookie).toBeNull();
  });

  it('any read scope with a page signs in, landing on its first page (decision 331)', async () => {
    for (const [token, home] of [
      [process.env.TEST_TOKEN_SYNC_READ, '/sync'],
      [process.env.TEST_TOKEN_SCAN_READ, '/scan'],
      [process.env.TEST_TOKEN_DOWNLOADS_READ, '/'],
    ]) {
      const res = await send('POST', '/signin', { form: `token=${token}` });
      expect([home, res.status, res.location, res.setCookie !== null]).toEqual([home, 303, home, true]);
    }
  });

  it('refuses a token in the URL, and a sign-in posted from another site', async () => {
    expect((await send('GET', `/signin?token=${process.env.TEST_TOKEN_ALL}`)).status).toBe(400);
    const cross = await send('POST', '/signin', {
      form: `token=${process.env.TEST_TOKEN_ALL}`,
      headers: { origin: 'http://evil.example' },
    });
    expect([cross.status, cross.setCookie]).toEqual([403, null]);
  });
});

describe('hostile text', () => {
  it('is escaped in names and search terms, on every page', async () => {
    const pages = [
      await send('GET', `/download/${target}`, { cookie: all.cookie }),
      await send('GET', `/review/${target}`, { cookie: all.cookie }),
      await send('GET', `/?q=${encodeURIComponent('<img src=x onerror')}`, { cookie: all.cookie }),
      await send('GET', `/?q=${encodeURIComponent(`"><script>alert(3)</script>`)}`, { cookie: all.cookie }),
    ];
    for (const page of pages) {
      expect(page.status).toBe(200);
      expect(page.body).not.toMatch(/<img|<svg|<script>alert/);
      // Only our own nonce'd script runs (CSP), even if escaping ever failed.
      expect(page.body.match(/<script/g)).toHaveLength(1);
    }
    expect(pages[0].body).toContain(
      '&lt;img src=x onerror=alert(1)&gt; &quot;&#39;&gt;&lt;svg onload=alert(2)&gt; &amp; done',
    );
    expect(pages[3].body).toContain('value="&quot;&gt;&lt;script&gt;alert(3)&lt;');
  });

  it('a search term with control characters is a 400 page', async () => {
    expect((await send('GET', `/?q=${encodeURIComponent('a\u0000b')}`, { cookie: all.cookie })).status).toBe(400);
    expect((await send('GET', `/?state=exploded`, { cookie: all.cookie })).status).toBe(400);
  });
});

describe('the operator console', () => {
  it('refuses its retry form without the write scope, without the form token, and from another site', async () => {
    const path = `/failures/${newId()}/retry`;
    expect((await send('POST', path, { cookie: readOnly.cookie, form: `csrf=${readOnly.csrf}` })).status).toBe(403);
    expect((await send('POST', path, { cookie: all.cookie, form: 'csrf=guess' })).status).toBe(403);
    const foreign = { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };
    expect((await send('POST', path, { cookie: all.cookie, form: `csrf=${all.csrf}`, headers: foreign })).status).toBe(
      403,
    );
    // With everything right, an unknown failure is a 404: nothing to send.
    expect((await send('POST', path, { cookie: all.cookie, form: `csrf=${all.csrf}` })).status).toBe(404);
  });

  it('answers hostile ids and queries with a 404 or 400 page, keeps serving, and escapes what it shows', async () => {
    for (const [path, status] of [
      ['/scan/..%2F..%2Fetc%2Fpasswd', 404],
      ['/scan/__proto__/raw', 404],
      [`/sync/${encodeURIComponent('<script>')}`, 404],
      ['/scan?phase=constructor', 400],
      ['/scan?page=1e999', 400],
      ['/scan?prefix=%ED%A0%80', 400], // a lone surrogate's bytes: not UTF-8
      ['/sync?after=__proto__', 400],
      [`/sync/${newId()}?attempt=${encodeURIComponent('"><script>')}`, 400],
    ] as const) {
      const res = await send('GET', path, { cookie: all.cookie });
      expect([path, res.status]).toEqual([path, status]);
      expect(res.body).not.toMatch(/<script>alert|<img/);
    }
    expect((await send('GET', '/scan', { cookie: all.cookie })).status).toBe(200);
    // The failed download with a hostile name is listed for review, as text.
    const failures = await send('GET', '/failures', { cookie: all.cookie });
    expect(failures.status).toBe(200);
    // The page draws its own charts (an <svg> of ours); a hostile name's markup never appears unescaped.
    expect(failures.body).not.toMatch(/<img|<svg[^>]*onload|<script>alert/);
    expect(failures.body).toContain(`href="/review/${target}"`);
  });
});

describe('logs', () => {
  it('never contain a token or a session cookie', () => {
    const log = fs.readFileSync(path.join(process.env.TEST_STATE_DIR!, 'logs', 'serverless-offline.log'), 'utf8');
    for (const secret of [
      process.env.TEST_TOKEN_ALL!,
      process.env.TEST_TOKEN_DOWNLOADS_READ!,
      all.cookie,
      all.cookie.split('.')[3],
      readOnly.cookie,
    ]) {
      expect(log.includes(secret)).toBe(false);
    }
  });
});

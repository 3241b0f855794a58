import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fs from 'node:fs';
import path from 'node:path';
import { newToken } from '../../lib/auth/tokens';
import { ROUTE_SCOPES, SESSION_ROUTES } from '../../lib/auth/scopes';
import { MAX_BODY_BYTES, MAX_JSON_DEPTH } from '../../lib/http/request';
import { newId } from '../../lib/ident';
import { v1 } from '../support/downloads';
import { bearer, call, emulatorTorrents } from '../support/http';
import { httpUrl, stackClients, stackConfig } from '../support/stack';

/**
 * The abuse suite (issue 6): hostile requests through the real `serverless
 * offline` HTTP port, authorizer included. Every one must get the right 4xx,
 * nothing may be written (tables, bucket and the torrent client are compared
 * whole before and after), the process must still serve, and no token may
 * reach the logs. Runs first in the stack project (test/support/sequencer),
 * on tables no other test has touched yet.
 */

const aws = stackClients();
const cfg = stackConfig();
const tokens = {
  all: process.env.TEST_TOKEN_ALL!,
  downloadsRead: process.env.TEST_TOKEN_DOWNLOADS_READ!,
  syncRead: process.env.TEST_TOKEN_SYNC_READ!,
  expired: process.env.TEST_TOKEN_EXPIRED!,
};
const wrongToken = newToken();
const seededName = `seed-${newId()}`;

/** Everything the service could write: all items of every table, every object, every torrent in the client. */
async function snapshot(): Promise<string> {
  const tables: Record<string, unknown[]> = {};
  for (const table of Object.values(cfg.tables)) {
    const items: unknown[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await aws.documents.send(
        new ScanCommand({ TableName: table, ExclusiveStartKey, ConsistentRead: true }),
      );
      items.push(...(page.Items ?? []));
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    tables[table] = items.map((i) => JSON.stringify(i)).sort();
  }
  const objects = await aws.s3.send(new ListObjectsV2Command({ Bucket: cfg.buckets.files }));
  const torrents = (await emulatorTorrents()).map((t) => t.hash).sort();
  return JSON.stringify({
    tables,
    objects: (objects.Contents ?? []).map((o) => `${o.Key}:${o.ETag}`).sort(),
    torrents,
  });
}

/** A concrete path and a well-formed body for each protected route: if a check were missing, the call WOULD write. */
function requestFor(routeKey: string): { method: string; path: string; body?: unknown } {
  const [method, template] = routeKey.split(' ');
  const path = template.replace(/\{[a-z]+\}/g, () => newId());
  const bodies: Record<string, unknown> = {
    'POST /downloads': { infohashes: [v1().infohash], name: 'abuse' },
    'POST /downloads/{id}/retry': {},
    'POST /downloads/{id}/state': { state: 'paused' },
    'POST /downloads/{id}/infohashes': { infohashes: [v1().infohash] },
    'POST /sync/connections': { user_id: newId(), token: 'tok_abuse_abuse' },
  };
  return { method, path, body: bodies[routeKey] };
}

let before: string;

beforeAll(async () => {
  // One download to search for, so injection-looking queries have something they could wrongly match.
  const seeded = await call('POST', '/downloads', { infohashes: [v1().infohash], name: seededName });
  expect(seeded.status).toBe(201);
  before = await snapshot();
});

afterAll(async () => {
  expect(await snapshot()).toBe(before);
  aws.dynamodb.destroy();
  aws.s3.destroy();
});

describe('authentication and scopes, on every protected route', () => {
  // The UI's routes take a session cookie, not a token: test/security/ui-abuse.test.ts.
  const routes = Object.keys(ROUTE_SCOPES).filter((r) => !SESSION_ROUTES.includes(r));

  it.each(routes)('%s: 401 without a token, with a wrong, expired or garbled one', async (route) => {
    const { method, path, body } = requestFor(route);
    const headers: Array<Record<string, string | undefined>> = [
      { authorization: undefined },
      bearer(wrongToken),
      bearer(tokens.expired),
      { authorization: `Bearer ${tokens.all.slice(0, -2)}` },
      { authorization: `Bearer ${tokens.all}x` },
      { authorization: `Basic ${Buffer.from(`user:${tokens.all}`).toString('base64')}` },
      { authorization: tokens.all },
      { authorization: 'Bearer ' },
      { authorization: `Bearer ${tokens.all} ${tokens.all}` },
      { authorization: `Bearer ${'A'.repeat(8000)}` },
      { authorization: 'Bearer \u00ff\u00fe garbage' },
    ];
    for (const h of headers) {
      const answer = await call(method, path, body, h);
      expect([h.authorization?.slice(0, 24), answer.status]).toEqual([h.authorization?.slice(0, 24), 401]);
    }
  });

  it.each(routes)('%s: 403 with a good token lacking the scope', async (route) => {
    const { method, path, body } = requestFor(route);
    const scope = ROUTE_SCOPES[route];
    const lacking = scope === 'downloads:read' ? tokens.syncRead : tokens.downloadsRead;
    expect((await call(method, path, body, bearer(lacking))).status).toBe(403);
  });

  it('lets the right scope through (the control: tokens do work) and leaves /healthcheck public', async () => {
    expect((await call('GET', '/downloads', undefined, bearer(tokens.downloadsRead))).status).toBe(200);
    expect((await call('GET', `/sync/${newId()}/hourly`, undefined, bearer(tokens.syncRead))).status).toBe(404);
    expect((await call('GET', '/healthcheck', undefined, { authorization: undefined })).status).toBe(200);
  });
});

describe('bodies', () => {
  it.each([
    ['POST', '/downloads'],
    ['POST', '/sync/connections'],
    ['POST', `/downloads/${newId()}/infohashes`],
  ])('%s %s: 413 naming the limit for a body over 64 KiB', async (method, path) => {
    const answer = await call(method, path, JSON.stringify({ name: 'x'.repeat(MAX_BODY_BYTES) }));
    expect([answer.status, answer.body.error]).toEqual([
      413,
      expect.objectContaining({ code: 'PAYLOAD_TOO_LARGE', limit: MAX_BODY_BYTES }),
    ]);
  });

  it('refuses a 5 MB body with 413 too', async () => {
    expect((await call('POST', '/downloads', `{"name":"${'x'.repeat(5 * 1024 * 1024)}"}`)).status).toBe(413);
  });

  it.each([MAX_JSON_DEPTH + 1, 5000])('400 naming the limit for JSON %i levels deep', async (levels) => {
    const deep = '['.repeat(levels) + ']'.repeat(levels);
    const answer = await call('POST', '/downloads', `{"infohashes":${deep}}`);
    expect([answer.status, answer.body.error]).toEqual([
      400,
      expect.objectContaining({ code: 'INVALID_REQUEST', limit: MAX_JSON_DEPTH }),
    ]);
  });

  it.each([
    ['17 infohashes', { infohashes: Array.from({ length: 17 }, () => v1().infohash) }, /16/],
    ['a 1025-character name', { infohashes: [v1().infohash], name: 'n'.repeat(1025) }, /1024/],
    [
      'a magnet over 16 KiB',
      { magnet: `magnet:?xt=urn:btih:${v1().infohash}&dn=${'a'.repeat(17_000)}` },
      /16384 characters/,
    ],
    ['a NoSQL operator for the magnet', { magnet: { $gt: '' } }, /string/],
    ['a prototype key', JSON.parse(`{"infohashes":["${v1().infohash}"],"__proto__":{"admin":true}}`), /unknown field/],
  ])('400 for %s', async (_label, body, message) => {
    const answer = await call('POST', '/downloads', body);
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toMatch(message);
  });

  it('415 for a body that is not JSON', async () => {
    expect(
      (await call('POST', '/downloads', 'magnet=x', { 'content-type': 'application/x-www-form-urlencoded' })).status,
    ).toBe(415);
  });
});

describe('names and ids that try to escape', () => {
  it.each(['../../etc/passwd', '/etc/passwd', '..', 'a\\..\\b', 'CON', 'lpt1.txt', 'a\u0000b', '.hidden', 'C:evil'])(
    'POST /downloads with name %j → 400 INVALID_NAME',
    async (name) => {
      const answer = await call('POST', '/downloads', { infohashes: [v1().infohash], name });
      expect([answer.status, answer.body.error?.code]).toEqual([400, 'INVALID_NAME']);
    },
  );

  it('a magnet whose dn escapes → 400 INVALID_NAME', async () => {
    const answer = await call('POST', '/downloads', {
      magnet: `magnet:?xt=urn:btih:${v1().infohash}&dn=..%2F..%2Froot`,
    });
    expect([answer.status, answer.body.error?.code]).toEqual([400, 'INVALID_NAME']);
  });

  it.each([
    ['/downloads/..%2F..%2Fetc%2Fpasswd', '/downloads/..%2F..%2Fetc%2Fpasswd'],
    ['/downloads/%00', '/downloads/%00'],
    ['/sync/..%2F..%2Fx/hourly', '/sync/..%2F..%2Fx/hourly'],
    ['/sync/attempts/%2F%2F', '/sync/attempts/%2F%2F'],
    ['/downloads/<a 4000-digit id>', `/downloads/${'1'.repeat(4000)}`],
  ])('GET %s → 404', async (_label, path) => {
    expect((await call('GET', path)).status).toBe(404);
  });

  it('GET /downloads/%2e%2e normalises to / (the UI list), which without a session only redirects to sign-in', async () => {
    const res = await fetch(httpUrl('/downloads/%2e%2e'), { redirect: 'manual', headers: bearer() });
    expect([res.status, res.headers.get('location')]).toEqual([303, '/signin']);
  });

  it('a connection whose user id escapes → 400', async () => {
    expect(
      (await call('POST', '/sync/connections', { user_id: '../../../etc/passwd', token: 'tok_abuse_abuse' })).status,
    ).toBe(400);
  });
});

describe('q: injection-looking text is matched literally, operators are refused', () => {
  it('finds the seeded download (the control)', async () => {
    const answer = await call('GET', `/downloads?q=${encodeURIComponent(seededName)}`);
    expect(answer.body.items.map((d: { name: string }) => d.name)).toEqual([seededName]);
  });

  it.each([
    `' OR '1'='1`,
    `"; DROP TABLE downloads; --`,
    `{"$ne": null}`,
    `*`,
    `%`,
    `.*`,
    `) || true || (`,
    `${seededName}' OR 1=1 --`,
  ])('q=%j → 200 and no match', async (q) => {
    const answer = await call('GET', `/downloads?q=${encodeURIComponent(q)}`);
    expect([answer.status, answer.body.items]).toEqual([200, []]);
  });

  it.each([
    ['an operator-shaped parameter', 'q[$ne]=x'],
    ['a NUL', 'q=a%00b'],
    ['a 129-character q', `q=${'q'.repeat(129)}`],
    ['limit over 100', 'limit=101'],
    ['a negative limit', 'limit=-1'],
    ['an exponent limit', 'limit=1e3'],
    ['a forged cursor', `cursor=${Buffer.from('v1:../../x').toString('base64url')}`],
  ])('%s → 400', async (_label, query) => {
    const answer = await call('GET', `/downloads?${query}`);
    expect([answer.status, answer.body.error?.code]).toEqual([400, 'INVALID_REQUEST']);
  });
});

describe('a flood', () => {
  it('1000 parallel bad requests each get their 4xx, and the service still serves', async () => {
    const status = async (path: string, body: unknown, headers: Record<string, string | undefined>) =>
      (await call('POST', path, body, headers)).status;
    const kinds: Array<[number, () => Promise<number>]> = [
      [401, () => status('/downloads', { infohashes: [v1().infohash] }, { authorization: undefined })],
      [401, () => status('/downloads', { infohashes: [v1().infohash] }, bearer(wrongToken))],
      [403, () => status('/sync/connections', { user_id: newId(), token: 'tok_flood_flood' }, bearer(tokens.syncRead))],
      [413, () => status('/downloads', { name: 'x'.repeat(MAX_BODY_BYTES) }, bearer(tokens.all))],
      [400, () => status('/downloads', '['.repeat(100) + ']'.repeat(100), bearer(tokens.all))],
      [400, () => status('/downloads', { magnet: 'magnet:?xt=urn:btih:nothex' }, bearer(tokens.all))],
    ];
    const plan = Array.from({ length: 1000 }, (_, i) => kinds[i % kinds.length]);
    const statuses = await Promise.all(plan.map(([, send]) => send()));
    expect(statuses).toEqual(plan.map(([expected]) => expected));

    const health = await call('GET', '/healthcheck', undefined, { authorization: undefined });
    expect(health.status).toBe(200);
    expect((await call('GET', `/downloads?q=${encodeURIComponent(seededName)}`)).body.items).toHaveLength(1);
  }, 120_000);
});

describe('the logs', () => {
  it('hold the refusals but never a token', () => {
    const logs = fs.readFileSync(path.join(process.env.TEST_STATE_DIR!, 'logs', 'serverless-offline.log'), 'utf8');
    expect(logs).toContain('"event":"auth_refused"');
    for (const token of [...Object.values(tokens), wrongToken]) {
      expect(logs.includes(token)).toBe(false);
      expect(logs.includes(token.slice(4, 24))).toBe(false);
    }
  });
});

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { newId } from '../../lib/ident';
import { v1 } from '../support/downloads';
import { call } from '../support/http';
import { httpUrl, stackClients, stackConfig, stackNats } from '../support/stack';
import { itemsAbout } from '../support/downloads';

/**
 * Abuse at the edges issue 11 names, on the real stack: throwing and hostile
 * asynchronous invocations through offline's Lambda port, HTTP handlers
 * invoked around the authorizer, names that cannot be stored, listening
 * sockets, and storage that hangs. After each, the service must still answer.
 */

const aws = stackClients();
const cfg = stackConfig();
const fn = (name: string) => `torrent-scan-sync-test-${name}`;
const pids: Record<string, number> = JSON.parse(process.env.TEST_STACK_PIDS!);
const offlineLog = path.join(process.env.TEST_STATE_DIR!, 'logs', 'serverless-offline.log');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One call to offline's Lambda invoke API (what `aws lambda invoke` and the NATS bridge use). */
async function invoke(name: string, payload: string, type: 'Event' | 'RequestResponse' = 'Event') {
  const res = await fetch(`${process.env.TEST_LAMBDA_URL}/2015-03-31/functions/${name}/invocations`, {
    method: 'POST',
    headers: { 'x-amz-invocation-type': type },
    body: payload,
  });
  const text = await res.text();
  return { status: res.status, text };
}

/** The service still serves: HTTP and the NATS bridge (health.ping → natsPing → reply). */
async function expectAlive() {
  const health = await fetch(httpUrl('/healthcheck'));
  expect(health.status).toBe(200);
  const nc = await stackNats('edge-abuse');
  try {
    const reply = await nc.request('health.ping', 'still there?', { timeout: 10_000 });
    expect(JSON.parse(new TextDecoder().decode(reply.data)).status).toBe('ok');
  } finally {
    await nc.close();
  }
}

/** Freezes one of the stack's services (its whole process group) for the duration of `body`: a hung dependency. */
async function whilePaused<T>(service: string, body: () => Promise<T>): Promise<T> {
  const pid = pids[service];
  if (!pid) throw new Error(`no pid for ${service} in TEST_STACK_PIDS`);
  process.kill(-pid, 'SIGSTOP');
  try {
    return await body();
  } finally {
    process.kill(-pid, 'SIGCONT');
  }
}

async function waitForLog(from: number, needle: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = fs.readFileSync(offlineLog).subarray(from).toString('utf8'); // `from` is a byte offset
    const line = text.split('\n').find((l) => l.includes(needle));
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no ${needle} in ${offlineLog} after ${timeoutMs} ms`);
    await sleep(200);
  }
}

describe('one message never stops the service (issue 11)', () => {
  it('an Event invoke of a handler that throws is logged, and every route, schedule and the NATS bridge still answer', async () => {
    const from = fs.statSync(offlineLog).size;
    // The torrent client hangs: the poll's list() fails after its bound, so the handler throws.
    await whilePaused('qbittorrent-emulator', async () => {
      expect((await invoke(fn('downloadsPoll'), '{"source":"aws.events"}')).status).toBe(202);
      const line = await waitForLog(from, 'async_handler_failed');
      expect(JSON.parse(line.slice(line.indexOf('{')))).toMatchObject({
        level: 'error',
        function: fn('downloadsPoll'),
      });
    });
    await expectAlive();
  }, 60_000);

  it.each([
    ['syncStep', 'not json at all {{{'],
    ['syncStep', 'null'],
    ['syncStep', JSON.stringify({ user_id: newId(), attempt_id: newId(), step_id: newId(), section: 'portfolio' })],
    ['natsPing', JSON.stringify({ source: 'nats', subject: 'health.ping', data: 'x', reply: 42 })],
    ['syncTick', '"just a string"'],
    ['downloadsPoll', JSON.stringify({ a: 'b'.repeat(100_000) })],
  ])(
    'a hostile Event invoke of %s (%#) leaves the service serving',
    async (name, payload) => {
      const { status } = await invoke(fn(name), payload);
      // 500: offline itself refuses a payload that is not JSON; our handler never runs.
      expect([202, 400, 413, 500]).toContain(status);
      await sleep(300);
      await expectAlive();
    },
    60_000,
  );
});

describe('the Lambda invoke port runs no HTTP handler without the authorizer (issue 11)', () => {
  const apiEvent = (routeKey: string, body: unknown, extra: Record<string, unknown> = {}) =>
    JSON.stringify({
      version: '2.0',
      routeKey,
      rawPath: routeKey.split(' ')[1],
      headers: { 'content-type': 'application/json' },
      requestContext: { http: { method: routeKey.split(' ')[0] }, ...extra },
      body: JSON.stringify(body),
      isBase64Encoded: false,
    });

  it('POST /downloads invoked directly is refused 401 and creates nothing', async () => {
    const hash = v1();
    const out = await invoke(
      fn('downloadsCreate'),
      apiEvent('POST /downloads', { infohashes: [hash.infohash], name: 'around-the-authorizer' }),
      'RequestResponse',
    );
    expect(out.status).toBe(200);
    const result = JSON.parse(out.text);
    expect(result.statusCode).toBe(401);
    expect(JSON.parse(result.body).error.code).toBe('UNAUTHORIZED');
    expect(await itemsAbout(aws, cfg.tables.downloads, [hash.infohash])).toEqual([]);
  });

  it('a forged context with an empty principal is refused too; replacing a sync token directly is refused', async () => {
    const forged = await invoke(
      fn('downloadsCreate'),
      apiEvent('POST /downloads', { infohashes: [v1().infohash] }, { authorizer: { lambda: { principal: '' } } }),
      'RequestResponse',
    );
    expect(JSON.parse(forged.text).statusCode).toBe(401);
    const sync = await invoke(
      fn('syncConnections'),
      apiEvent('POST /sync/connections', { user_id: newId(), token: 'tok_replaced123' }),
      'RequestResponse',
    );
    expect(JSON.parse(sync.text).statusCode).toBe(401);
  });

  it('the same request through the API (authorizer run) still works', async () => {
    const res = await call('POST', '/downloads', { infohashes: [v1().infohash], name: 'through-the-api' });
    expect(res.status).toBe(201);
  });
});

describe('names that cannot be stored are refused at the edge (issue 11)', () => {
  it.each([
    ['a lone high surrogate', '"bad\\ud800name"'],
    ['a lone low surrogate', '"\\udc00bad"'],
    ['a padded device name', '"CON .mkv"'],
    ['a device name with a trailing dot and space', '"nul. "'],
    ['a wildcard', '"Season*.mkv"'],
    ['a question mark', '"what?.mkv"'],
  ])('%s → 400 INVALID_NAME, nothing written, and the retry gets the same answer', async (_what, nameJson) => {
    const hash = v1();
    const body = `{"infohashes":["${hash.infohash}"],"name":${nameJson}}`;
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await call('POST', '/downloads', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('INVALID_NAME');
    }
    expect(await itemsAbout(aws, cfg.tables.downloads, [hash.infohash])).toEqual([]);
  });
});

describe('every service of the stack listens on loopback only (issue 11)', () => {
  /** Listening TCP/UDP sockets of the stack's process groups: [address, port, process]. */
  function stackSockets(): Array<{ address: string; port: number; service: string }> {
    const groups = new Map(Object.entries(pids).map(([name, pid]) => [pid, name]));
    const out = execFileSync('ss', ['-H', '-l', '-n', '-p', '-t', '-u'], { encoding: 'utf8' });
    const sockets: Array<{ address: string; port: number; service: string }> = [];
    for (const line of out.split('\n').filter(Boolean)) {
      const local = line.trim().split(/\s+/)[4];
      const address = local
        .slice(0, local.lastIndexOf(':'))
        .replace(/^\[|\]$/g, '')
        .replace(/%.*$/, '');
      const port = Number(local.slice(local.lastIndexOf(':') + 1));
      for (const m of line.matchAll(/pid=(\d+)/g)) {
        let pgid: number;
        try {
          pgid = Number(fs.readFileSync(`/proc/${m[1]}/stat`, 'utf8').split(') ')[1].split(' ')[2]);
        } catch {
          continue;
        }
        const service = groups.get(pgid);
        if (service) sockets.push({ address, port, service });
      }
    }
    return sockets;
  }
  const loopback = (a: string) => /^127\./.test(a) || a === '::1' || /^::ffff:127\./i.test(a);

  it('ss -ltnup finds every service port, and no socket of the stack on a non-loopback address', () => {
    const sockets = stackSockets();
    const ports = new Set(sockets.map((s) => s.port));
    const expected = [
      cfg.endpoints.dynamodb,
      cfg.endpoints.s3,
      process.env.NATS_URL,
      process.env.TEST_HTTP_URL,
      process.env.TEST_LAMBDA_URL,
      process.env.TORRENT_CLIENT_URL,
      process.env.TBANK_API_URL,
      process.env.TELEGRAM_API_ROOT,
      process.env.NATS_CONNECTOR_HEALTH,
    ].map((url) => Number(new URL(url!).port));
    for (const port of expected) expect(ports).toContain(port);
    expect(sockets.filter((s) => !loopback(s.address))).toEqual([]);
  });
});

describe('storage outages answer 503 (issue 11)', () => {
  it('while DynamoDB hangs, a read answers 503 with Retry-After within a bounded time, and the service recovers', async () => {
    const id = newId();
    await whilePaused('dynamodb-local', async () => {
      const began = Date.now();
      const res = await call('GET', `/downloads/${id}`);
      const took = Date.now() - began;
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('UNAVAILABLE');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      // The SDK's bound is 2 × 2.5 s; the Lambda timeout (10 s) must never be what ends the request.
      expect(took).toBeLessThan(9_500);
    });
    expect((await call('GET', `/downloads/${id}`)).status).toBe(404);
  }, 60_000);
});

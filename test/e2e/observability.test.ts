import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { NatsConnection } from 'nats';
import { newId } from '../../lib/ident';
import { NAMESPACE } from '../../lib/metrics';
import { dimensionSets, type MetricName } from '../../lib/metrics/catalog';
import type { Envelope } from '../../lib/scan/contract';
import { v1 } from '../support/downloads';
import { call } from '../support/http';
import { aws, request, upload } from '../support/scan';
import { invokeScheduled, stackNats } from '../support/stack';

/**
 * Logs and metrics as the functions really write them (issue 40): a scan
 * request, a sync tick and a download each emit their metric lines, read
 * back from serverless offline's log (every function's stdout, as CloudWatch
 * Logs would receive it) and parsed as EMF; a forced error logs its stack and
 * request id; and in the whole run so far no line prints a secret the run
 * planted (API tokens, the session and token keyrings, the bot token, the
 * webhook secret, the torrent client's and NATS's passwords, a T-Bank token).
 */
jest.setTimeout(180_000);

const logDir = path.join(process.env.TEST_STATE_DIR!, 'logs');
const offlineLog = path.join(logDir, 'serverless-offline.log');
const fn = (name: string) => `torrent-scan-sync-test-${name}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The T-Bank token this file plants (the brokerage emulator takes any `t.` token). */
const plantedTbankToken = `t.planted-${randomUUID()}`;
/** A parsed line, walked freely in assertions. */
type Line = ReturnType<typeof JSON.parse>;

/** The JSON lines written since byte `from` (a line may carry a prefix before its object). */
function linesSince(from: number): Line[] {
  return fs
    .readFileSync(offlineLog)
    .subarray(from)
    .toString('utf8')
    .split('\n')
    .filter((l) => l.includes('{"'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l.slice(l.indexOf('{"')))];
      } catch {
        return [];
      }
    });
}

async function waitForLines(from: number, match: (line: Line) => boolean, count = 1, ms = 60_000): Promise<Line[]> {
  for (const end = Date.now() + ms; ; await sleep(250)) {
    const found = linesSince(from).filter(match);
    if (found.length >= count) return found;
    if (Date.now() > end) throw new Error(`only ${found.length} of ${count} lines matched in ${offlineLog}`);
  }
}

/** What CloudWatch requires of an EMF line, asserted, for each of the metrics named. */
function expectEmf(line: Line, names: MetricName[]) {
  const directives = line._aws.CloudWatchMetrics as Array<{
    Namespace: string;
    Dimensions: string[][];
    Metrics: Array<{ Name: string; Unit: string }>;
  }>;
  expect(typeof line._aws.Timestamp).toBe('number');
  for (const name of names) {
    const directive = directives.find((d) => d.Metrics.some((m) => m.Name === name));
    expect(directive?.Namespace).toBe(NAMESPACE);
    expect(directive?.Dimensions).toEqual(dimensionSets(name));
    expect(typeof line[name]).toBe('number');
    for (const d of directive!.Dimensions.flat()) expect([d, typeof line[d]]).toEqual([d, 'string']);
  }
  expect(line).toMatchObject({ service: 'torrent-scan-sync', stage: 'test', event: 'metric' });
  expect(line.request_id).toEqual(expect.any(String));
}

const hasMetric = (name: MetricName) => (line: Line) => line._aws && typeof line[name] === 'number';

describe('metric lines from the functions, parsed as EMF', () => {
  let nc: NatsConnection;
  const envelopes: Envelope[] = [];
  beforeAll(async () => {
    nc = await stackNats('observability');
    nc.subscribe('scan.results', { callback: (_e, m) => envelopes.push(JSON.parse(new TextDecoder().decode(m.data))) });
    await nc.flush();
  });
  afterAll(async () => {
    await nc.close();
    aws.dynamodb.destroy();
    aws.s3.destroy();
  });

  it('a scan request: latency, the gateway part, lateness, backlog and slots, each line carrying the job', async () => {
    const from = fs.statSync(offlineLog).size;
    const key = await upload('aep_3.pdf');
    const job = randomUUID();
    nc.publish(
      'scan.requests',
      JSON.stringify(
        request(key, 'aep_3.pdf', { job_id: job, reply_deadline: new Date(Date.now() + 600_000).toISOString() }),
      ),
    );
    const final = () => envelopes.some((e) => e.job_id === job && e.status !== 'processing');
    // The request starts a poller; the schedule is off in tests, so drive it too until the answer is out.
    for (let i = 0; i < 10 && !final(); i++) {
      await sleep(1500);
      if (!final()) expect((await invokeScheduled('scanPoll')).FunctionError).toBeUndefined();
    }
    expect(final()).toBe(true);

    const [latency] = await waitForLines(from, (l) => hasMetric('ScanLatency')(l) && l.job_id === job);
    expectEmf(latency, ['ScanLatency', 'ScanAnswerDelay', 'ScanAnswersLate']);
    expect(latency).toMatchObject({ domain: 'scan', ScanAnswersLate: 0, status: 'done' });
    expect(latency.ScanLatency).toBeGreaterThanOrEqual(latency.ScanAnswerDelay);
    expect(latency.function).toMatch(/^torrent-scan-sync-test-scan(Poll|Request)$/);

    const [load] = await waitForLines(from, hasMetric('ScanInFlight'));
    expectEmf(load, ['ScanBacklog', 'ScanInFlight']);
    expect(load.function).toBe(fn('scanPoll'));

    // Every log line about the job carries its invocation.
    const about = linesSince(from).filter((l) => l.job_id === job && !l._aws);
    expect(about.length).toBeGreaterThan(0);
    for (const l of about)
      expect([l.event, l.request_id, l.function, typeof l.cold_start]).toEqual([
        l.event,
        expect.any(String),
        expect.stringMatching(/^torrent-scan-sync-test-scan/),
        'boolean',
      ]);
  });

  it('a sync tick: the attempt settled, T-Bank 429s and budget waits per step, by the attempt and user', async () => {
    const from = fs.statSync(offlineLog).size;
    const user = newId();
    expect((await call('POST', '/sync/connections', { user_id: user, token: plantedTbankToken })).status).toBe(201);
    expect((await invokeScheduled('syncTick')).FunctionError).toBeUndefined();
    const [settled] = await waitForLines(from, (l) => hasMetric('SyncAttempts')(l) && l.user_id === user, 1, 120_000);
    expectEmf(settled, ['SyncAttempts', 'SyncAttemptsNotSucceeded']);
    expect(settled).toMatchObject({ domain: 'sync', outcome: 'succeeded', cause: 'none', SyncAttemptsNotSucceeded: 0 });
    const attempt = settled.attempt_id;

    // One of each per step: the four sections.
    const limited = await waitForLines(from, (l) => hasMetric('TbankRateLimited')(l) && l.attempt_id === attempt, 4);
    limited.forEach((l) => expectEmf(l, ['TbankRateLimited']));
    expect(new Set(limited.map((l) => l.section)).size).toBe(4);
    const waits = linesSince(from).filter((l) => hasMetric('TbankBudgetWait')(l) && l.attempt_id === attempt);
    // Each of the four steps reports both budgets' waits. A step run again (an invocation retried on a loaded
    // machine) reports its own pair too, so the check is by section, not a fixed count of lines.
    const sectionsOf = (budget: string) => new Set(waits.filter((l) => l.budget === budget).map((l) => l.section));
    expect([sectionsOf('egress').size, sectionsOf('token').size]).toEqual([4, 4]);
    expect(waits.every((l) => l.budget === 'egress' || l.budget === 'token')).toBe(true);
    waits.forEach((l) => expectEmf(l, ['TbankBudgetWait']));
    expect(waits[0].function).toBe(fn('syncStep'));
  });

  it('a download: its creation and a move as DownloadTransitions by state, its notice as NotifierLag', async () => {
    const from = fs.statSync(offlineLog).size;
    const created = await call('POST', '/downloads', { infohashes: [v1().infohash], name: 'observability' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    const [line] = await waitForLines(from, (l) => hasMetric('DownloadTransitions')(l) && l.download_id === id);
    expectEmf(line, ['DownloadTransitions']);
    expect(line).toMatchObject({ domain: 'downloads', state: created.body.state, function: fn('downloadsCreate') });
    // A move by the API: paused.
    expect((await call('POST', `/downloads/${id}/state`, { state: 'paused' })).status).toBe(200);
    const [paused] = await waitForLines(
      from,
      (l) => hasMetric('DownloadTransitions')(l) && l.download_id === id && l.state === 'paused',
    );
    expect(paused).toMatchObject({ from: created.body.state, function: fn('downloadsState') });
    // The new download's notice, sent by the stream's notifier: its lag, from the write to the send.
    const [lag] = await waitForLines(from, (l) => hasMetric('NotifierLag')(l) && l.download_id === id);
    expectEmf(lag, ['NotifierLag']);
    expect(lag).toMatchObject({ domain: 'telegram', kind: 'created', function: fn('telegramNotify') });
    expect(lag.NotifierLag).toBeLessThan(60_000);
  });
});

describe('a forced error', () => {
  const pids: Record<string, number> = JSON.parse(process.env.TEST_STACK_PIDS!);

  it('is logged with its stack, cause and request id, and counted as AsyncHandlerFailures of its function', async () => {
    const from = fs.statSync(offlineLog).size;
    // The torrent client hangs: the poll's list() fails after its bound, so the handler throws.
    process.kill(-pids['qbittorrent-emulator'], 'SIGSTOP');
    try {
      const res = await fetch(
        `${process.env.TEST_LAMBDA_URL}/2015-03-31/functions/${fn('downloadsPoll')}/invocations`,
        {
          method: 'POST',
          headers: { 'x-amz-invocation-type': 'Event' },
          body: '{"source":"aws.events"}',
        },
      );
      expect(res.status).toBe(202);
      const [failed] = await waitForLines(
        from,
        (l) => l.event === 'async_handler_failed' && l.function === fn('downloadsPoll'),
      );
      expect(failed).toMatchObject({
        level: 'error',
        request_id: expect.any(String),
        cold_start: expect.any(Boolean),
        err: { name: expect.any(String), message: expect.any(String), stack: expect.stringContaining('\n    at ') },
      });
      const [counted] = await waitForLines(
        from,
        (l) => hasMetric('AsyncHandlerFailures')(l) && l.request_id === failed.request_id,
      );
      expectEmf(counted, ['AsyncHandlerFailures']);
      expect(counted).toMatchObject({ domain: 'platform', function: fn('downloadsPoll') });
    } finally {
      process.kill(-pids['qbittorrent-emulator'], 'SIGCONT');
    }
  });
});

describe('a planted-secret run', () => {
  it('prints none of the run’s secrets in any line the service wrote', () => {
    const env = process.env;
    const keyringKeys = (ring = '') => ring.split(',').map((entry) => entry.slice(entry.indexOf(':') + 1));
    const secrets = Object.entries({
      'API token (all scopes)': env.TEST_TOKEN_ALL,
      'API token (downloads:read)': env.TEST_TOKEN_DOWNLOADS_READ,
      'API token (sync:read)': env.TEST_TOKEN_SYNC_READ,
      'session key': keyringKeys(env.SESSION_KEYS)[0],
      'token keyring key': keyringKeys(env.SYNC_TOKEN_KEYS)[0],
      'bot token': env.TELEGRAM_BOT_TOKEN,
      'webhook secret': env.TELEGRAM_WEBHOOK_SECRET,
      'torrent client password': env.TORRENT_CLIENT_PASSWORD,
      'NATS password': env.NATS_PASSWORD,
      'T-Bank token': plantedTbankToken,
    });
    for (const [what, value] of secrets) expect([what, (value ?? '').length >= 12]).toEqual([what, true]);
    // The service's own processes: serverless offline (every function) and the NATS connector.
    const files = fs
      .readdirSync(logDir)
      .filter((f) => f === 'serverless-offline.log' || f.startsWith('nats-connector'));
    expect(files).toContain('serverless-offline.log');
    const text = files.map((f) => fs.readFileSync(path.join(logDir, f), 'utf8')).join('\n');
    for (const [what, value] of secrets)
      for (const form of [value!, encodeURIComponent(value!)])
        expect([what, text.includes(form)]).toEqual([what, false]);
  });
});

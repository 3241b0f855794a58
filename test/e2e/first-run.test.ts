import { spawn } from 'node:child_process';
import path from 'node:path';
import { FIRST_RUN_COMMANDS, firstRunLines } from '../../tools/stack/first-run';
import { newId } from '../../lib/ident';
import { call } from '../support/http';
import { httpUrl, invokeScheduled } from '../support/stack';

/**
 * The lines `npm start` prints to try scan and sync, run as printed against
 * the test stack (its endpoints and token given as `.stack/env` would give
 * them), until the console shows the job and the attempt.
 */

const ROOT = path.resolve(__dirname, '..', '..');

interface Running {
  done: Promise<number | null>;
  output: () => string;
}

function start(argv: readonly string[], env: Record<string, string> = {}): Running {
  const [command, ...args] = argv;
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      STACK_ENV_FILE: '',
      API_URL: process.env.TEST_HTTP_URL,
      API_TOKEN: process.env.TEST_TOKEN_ALL,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 150_000);
  const done = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    }),
  );
  return { done, output: () => output };
}

async function until<T>(what: string, read: () => T | undefined | Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`no ${what} within ${ms / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function consolePage(url: string): Promise<string> {
  const signin = await fetch(httpUrl('/signin'), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: process.env.TEST_TOKEN_ALL! }).toString(),
  });
  const cookie = /tss_session=([^;]+)/.exec(signin.headers.get('set-cookie') ?? '')![1];
  const page = await fetch(httpUrl(url), { headers: { cookie: `tss_session=${cookie}` } });
  expect(page.status).toBe(200);
  return page.text();
}

describe('the first run: the lines npm start prints for scan and sync', () => {
  it('prints both commands, and a sync line for your own token when T-Bank is real', () => {
    const lines = firstRunLines({ api: 'http://127.0.0.1:3000', tbankEmulator: true });
    expect(lines).toEqual([
      expect.stringContaining('npm run scan -- fixtures/ocr/inputs/aep_3.pdf'),
      expect.stringContaining('npm run sync:demo'),
    ]);
    expect(firstRunLines({ api: 'http://127.0.0.1:3000', tbankEmulator: false })[1]).toMatch(
      /POST \/sync\/connections with your T-Bank token/,
    );
  });

  it('the scan line: the job is answered and the console lists it', async () => {
    const scan = start(FIRST_RUN_COMMANDS.scan);
    expect(await scan.done).toBe(0);
    const job = /published job ([0-9a-f-]{36})/.exec(scan.output())![1];
    expect(scan.output()).toMatch(/"status": "done"/);
    expect(await consolePage('/scan')).toContain(job);
    expect(await consolePage(`/scan/${job}`)).toContain('aep_3.pdf');
  }, 120_000);

  it('the sync line: the demo account connects and, after the minute tick, its attempt shows in the API and the console', async () => {
    const sync = start(FIRST_RUN_COMMANDS.sync);
    const user = await until('connection', () => /connected demo user ([0-9a-z]{26})/.exec(sync.output())?.[1]);
    // Connected, no attempt yet: the read says it is queued for its first sync, and where (decision 365).
    const queued = await call('GET', `/sync/${user}/hourly`);
    expect(queued.status).toBe(200);
    expect(queued.body).toMatchObject({ state: 'queued', meta: { attempt_id: null }, queue: { reason: 'first_sync' } });
    expect(queued.body.queue.position).toBeGreaterThanOrEqual(1);
    expect(Date.parse(queued.body.queue.expected_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(await consolePage(`/sync/${user}`)).toMatch(
      /Waiting for its first sync: number \d+ in line|Ждёт первой синхронизации/,
    );
    // The test stack's schedules are off (tests drive ticks): this is the minute tick npm start's schedule runs.
    expect((await invokeScheduled('syncTick')).FunctionError).toBeUndefined();
    expect(await sync.done).toBe(0);
    const attempt = /attempt ([0-9a-z]{26}) /.exec(sync.output())![1];
    const hourly = await call('GET', `/sync/${user}/hourly`);
    expect(hourly.body.meta.attempt_id).toBe(attempt);
    expect((await call('GET', `/sync/attempts/${attempt}`)).status).toBe(200);
    expect(await consolePage(`/sync/${user}`)).toContain(attempt);
    expect(sync.output()).not.toContain(process.env.TEST_TOKEN_ALL);
  }, 150_000);

  it.each([
    ['the real API', 'https://invest-public-api.tbank.ru', /is not the T-Bank emulator/],
    ['a loopback service that is not the emulator', 'TEST_HTTP_URL', /is not the T-Bank emulator/],
  ])(
    'sync:demo refuses %s as TBANK_API_URL, and connects nothing',
    async (_, url, says) => {
      const user = newId();
      const refused = start([...FIRST_RUN_COMMANDS.sync, '--', '--no-wait', '--user', user], {
        TBANK_API_URL: url === 'TEST_HTTP_URL' ? process.env.TEST_HTTP_URL! : url,
      });
      expect(await refused.done).toBe(2);
      expect(refused.output()).toMatch(says);
      expect(refused.output()).not.toMatch(/^\s+at .*:\d+:\d+\)?$/m);
      // DELETE answers 404 when there is no connection to remove.
      expect((await call('DELETE', `/sync/connections/${user}`)).status).toBe(404);
    },
    60_000,
  );
});

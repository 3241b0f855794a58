/// <reference lib="dom" />
import { randomUUID } from 'node:crypto';
import type { NatsConnection } from 'nats';
import type { Browser, BrowserContext, HTTPResponse, Page } from 'puppeteer-core';
import { handler as consoleHandler } from '../../functions/web/console';
import { handler as retryHandler } from '../../functions/web/console-retry';
import { awsClients } from '../../lib/aws/clients';
import { config } from '../../lib/config';
import { newId } from '../../lib/ident';
import { DynamoDeliveryStore } from '../../lib/telegram/dynamodb-store';
import fs from 'node:fs';
import path from 'node:path';
import { launchBrowser, screenshot, SCREENSHOTS, seriousViolations, signIn } from '../support/browser';
import { call } from '../support/http';
import { downloadsStore, v1 } from '../support/downloads';
import { httpUrl, invokeScheduled, stackClients, stackDefinition, stackNats } from '../support/stack';
import { chats, messagesAbout } from '../support/telegram';
import { aws as scanAws, request, upload } from '../support/scan';
import { invokePage } from '../support/web';

/**
 * The operator console in real Chromium against the real stack: a scan run
 * through NATS, the scan poll and the scanner emulator; a sync run by the tick
 * against the T-Bank emulator with a faulted section; a Telegram failure
 * retried through the Telegram emulator. The tests run in order.
 */
jest.setTimeout(120_000);

const base = httpUrl('/').replace(/\/$/, '');
const aws = stackClients();
const tbank = process.env.TBANK_API_URL!;
let browser: Browser;
let nc: NatsConnection;

async function signedIn(token: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await signIn(page, token);
  return { context, page };
}
const go = async (page: Page, p: string): Promise<HTTPResponse> =>
  (await page.goto(`${base}${p}`, { waitUntil: 'domcontentloaded' }))!;
/** The page's session cookie, for requests made outside the page (its CSP allows no fetch). */
const cookieOf = async (page: Page) => (await page.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
const navLinks = (page: Page) => page.$$eval('nav.sections a', (as) => as.map((a) => a.getAttribute('href')));

let operator: Page;
/** Made by the tests below, looked at by the last one. */
const made = { job: '', user: '' };

beforeAll(async () => {
  browser = await launchBrowser();
  nc = await stackNats();
  operator = (await signedIn(process.env.TEST_TOKEN_ALL!)).page;
});
afterAll(async () => {
  await fetch(`${tbank}/emulator/faults`, { method: 'DELETE' });
  await nc?.close();
  await browser?.close();
  aws.dynamodb.destroy();
  aws.s3.destroy();
  scanAws.dynamodb.destroy();
  scanAws.s3.destroy();
});

describe('scopes', () => {
  it('a session without scan:read or sync:read sees no such link and gets 403 on the routes', async () => {
    const { context, page } = await signedIn(process.env.TEST_TOKEN_DOWNLOADS_READ!);
    expect(await navLinks(page)).toEqual(['/', '/failures']);
    for (const p of ['/scan', `/scan/${randomUUID()}`, '/sync', `/sync/${newId()}`])
      expect([p, (await go(page, p)).status()]).toEqual([p, 403]);
    // Failures is a downloads:read page; its retry needs downloads:write.
    expect((await go(page, '/failures')).status()).toBe(200);
    await context.close();
    expect(await navLinks(operator)).toEqual(['/', '/scan', '/sync', '/failures']);
  });

  it('malformed ids answer 404 with no storage call (the deployed handler in-process, counted)', async () => {
    let calls = 0;
    const clients = awsClients(config());
    for (const c of [clients.dynamodb, clients.s3] as Array<{
      middlewareStack: typeof clients.dynamodb.middlewareStack;
    }>)
      c.middlewareStack.add((next) => async (args) => (calls++, next(args)), { step: 'initialize', name: 'count' });
    const ctx = {
      principal: 'test-all',
      scopes: 'downloads:read downloads:write scan:read sync:read',
      csrf: 'k'.repeat(24),
    };
    const invoke = (method: string, routeKey: string, params: Record<string, string>, body?: string) =>
      invokePage(method === 'POST' ? retryHandler : consoleHandler, ctx, { method, routeKey, params, body });
    for (const bad of [
      '12345',
      `${randomUUID()}x`,
      '../../etc/passwd',
      '__proto__',
      'ZZZZZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZZZZZZZZZ',
    ]) {
      expect((await invoke('GET', 'GET /scan/{job_id}', { job_id: bad })).statusCode).toBe(404);
      expect((await invoke('GET', 'GET /scan/{job_id}/raw', { job_id: bad })).statusCode).toBe(404);
      expect((await invoke('GET', 'GET /sync/{user}', { user: bad })).statusCode).toBe(404);
      expect((await invoke('POST', 'POST /failures/{id}/retry', { id: bad }, `csrf=${ctx.csrf}`)).statusCode).toBe(404);
    }
    expect(calls).toBe(0);
    // The counter counts: a well-formed unknown job id costs one read.
    expect((await invoke('GET', 'GET /scan/{job_id}', { job_id: randomUUID().toUpperCase() })).statusCode).toBe(404);
    expect(calls).toBe(1);
  });
});

describe('scan', () => {
  it('a scan run through NATS shows up with its phases, envelope and raw answer', async () => {
    const scan = request(await upload('aep_6.pdf'), 'aep_6.pdf', {
      reply_deadline: new Date(Date.now() + 600_000).toISOString(),
    });
    const job = scan.job_id;
    const published: string[] = [];
    const sub = nc.subscribe('scan.results', {
      callback: (_e, m) => {
        const e = JSON.parse(new TextDecoder().decode(m.data)) as { status: string; job_id: string };
        published.push(`${e.job_id}:${e.status}`);
      },
    });
    nc.publish('scan.requests', JSON.stringify(scan));
    // The scanner emulator takes 6-8 s for aep_6.pdf on a loaded 2-core machine (the gateway's own part is ~2 s).
    for (let i = 0; i < 30 && !published.includes(`${job}:done`); i++) {
      await new Promise((r) => setTimeout(r, 500));
      expect((await invokeScheduled('scanPoll')).FunctionError).toBeUndefined();
    }
    sub.unsubscribe();
    expect(published).toContain(`${job}:done`);
    made.job = job;

    await go(operator, '/scan');
    const row = await operator.$eval(`a[href="/scan/${job}"]`, (a) => a.closest('tr')!.innerText);
    expect(row).toContain('Done');
    expect(await operator.$$eval('section[aria-labelledby="times"] figure.chart svg', (s) => s.length)).toBe(4);
    // Filtered by its id prefix: this job alone or with a few sharing the prefix.
    await go(operator, `/scan?prefix=${job.slice(0, 8)}&phase=done`);
    expect(await operator.$$eval('table.list tbody tr', (r) => r.length)).toBeGreaterThanOrEqual(1);
    expect(await operator.$eval('table.list tbody', (t) => t.textContent)).toContain(job.slice(0, 8));

    await go(operator, `/scan/${job}`);
    const phases = await operator.$$eval('ol.timeline li', (lis) => lis.map((li) => li.querySelector('time') !== null));
    expect(phases).toEqual([true, true, true, true, true]);
    expect(await operator.$eval('main', (m) => m.textContent)).toContain('done');
    // The raw answer is served through the service with the session, as a download, never from S3 directly.
    const res = await fetch(`${base}/scan/${job}/raw`, { headers: { cookie: await cookieOf(operator) } });
    const raw = {
      status: res.status,
      type: res.headers.get('content-type'),
      disposition: res.headers.get('content-disposition'),
      body: await res.text(),
    };
    expect((await fetch(`${base}/scan/${job}/raw`, { redirect: 'manual' })).status).toBe(303); // no session: sign in first
    expect(raw).toMatchObject({
      status: 200,
      type: expect.stringMatching(/^application\/json\b/),
      disposition: expect.stringContaining('attachment'),
    });
    expect(() => JSON.parse(raw.body)).not.toThrow();
    expect(await operator.$eval(`a[href="/scan/${job}/raw"]`, (a) => a.getAttribute('href'))).toBe(`/scan/${job}/raw`);
  });
});

describe('sync', () => {
  it('an attempt with a faulted section shows partial with the section’s error code and tracking id', async () => {
    await fetch(`${tbank}/emulator/faults`, {
      method: 'PUT',
      body: JSON.stringify({ 'OperationsService/GetOperationsByCursor': { error: 70001 } }),
    });
    const user = newId();
    expect((await call('POST', '/sync/connections', { user_id: user, token: `t.${user}` })).status).toBe(201);
    expect((await invokeScheduled('syncTick')).FunctionError).toBeUndefined();
    let hourly: { status: number; body?: { state?: string } } = { status: 0 };
    for (let i = 0; i < 400 && (hourly.body?.state ?? 'running') === 'running'; i++) {
      await new Promise((r) => setTimeout(r, 250));
      hourly = await call('GET', `/sync/${user}/hourly`);
    }
    await fetch(`${tbank}/emulator/faults`, { method: 'DELETE' });
    expect(hourly).toMatchObject({ status: 200, body: { state: 'partial' } });
    made.user = user;

    await go(operator, '/sync');
    expect(await operator.$eval('main', (m) => m.textContent)).not.toContain(`t.${user}`);
    await go(operator, `/sync/${user}`);
    const cells = await operator.$$eval('ol.strip li', (lis) => lis.map((li) => li.className));
    expect(cells).toHaveLength(48);
    expect(cells.filter((c) => c.includes('st-partial'))).toHaveLength(1);
    const events = await operator.$$eval('table.list tbody tr', (trs) =>
      trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent!.trim())),
    );
    const row = events.find((cols) => cols[0] === 'operations')!;
    expect(row[1]).toBe('failed');
    expect(row[2]).toBe('UPSTREAM_ERROR');
    expect(row[4]).toMatch(/^[0-9a-f]{32}$/);
    expect(events.find((cols) => cols[0] === 'portfolio')![1]).toBe('succeeded');
    // The second phase never started: its dependency failed.
    expect(events.find((cols) => cols[0] === 'catalog.enrichment')!.slice(1, 3)).toEqual([
      'failed',
      'DEPENDENCY_FAILED',
    ]);
    const html = await operator.content();
    // Never a brokerage token or any part of it.
    expect(html).not.toContain(`t.${user}`);
    expect(await operator.$$eval('progress', (p) => p.length)).toBeGreaterThan(0);
  });
});

describe('failures', () => {
  it('a Telegram delivery that failed appears with a Retry that works once', async () => {
    const created = await call('POST', '/downloads', { infohashes: [v1().infohash], name: `console-${Date.now()}` });
    expect(created.status).toBe(201);
    const downloadId = created.body.id as string;
    const [chat] = chats();
    const store = new DynamoDeliveryStore({
      documents: aws.documents,
      table: (stackDefinition().resources.Resources.TelegramTable.Properties as { TableName: string }).TableName,
    });
    await store.recordFailure({
      event_id: `ev-${newId()}`,
      chat_id: chat,
      download_id: downloadId,
      kind: 'stuck',
      reason: 'gave up after 5 attempts: 502 Bad Gateway',
    });
    // The retry's message is the failed kind's ("Stuck"); the download's own "New download" notice arrives on its own.
    const retried = async () => (await messagesAbout(downloadId, chat)).filter((m) => m.text.startsWith('Stuck'));
    expect(await retried()).toHaveLength(0);

    await go(operator, '/failures');
    const form = `form[action^="/failures/"]`;
    const row = await operator.$eval(`a[href="/download/${downloadId}"]`, (a) => a.closest('tr')!.innerText);
    expect(row).toContain('gave up after 5 attempts');
    const action = await operator.$eval(`a[href="/download/${downloadId}"]`, (a) =>
      a.closest('tr')!.querySelector('form')!.getAttribute('action'),
    );
    await Promise.all([
      operator.waitForNavigation({ waitUntil: 'domcontentloaded' }),
      operator.click(`${form}[action="${action}"] button`),
    ]);
    expect(await operator.$eval('main', (m) => m.textContent)).toContain('Delivery sent again');
    expect(await retried()).toHaveLength(1);
    // Once: the button is gone, and a replayed form is refused without sending.
    expect(await operator.$eval(`a[href="/download/${downloadId}"]`, (a) => a.closest('tr')!.innerHTML)).not.toContain(
      'Retry</button>',
    );
    const csrf = await operator.$eval('form[action="/signout"] input[name=csrf]', (i) => (i as HTMLInputElement).value);
    const { status } = await fetch(`${base}${action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: await cookieOf(operator),
        origin: base,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: `csrf=${encodeURIComponent(csrf)}`,
    });
    expect(status).toBe(409);
    expect(await retried()).toHaveLength(1);
  });
});

describe('metrics', () => {
  /** A panel's figures: label → the value shown, and whether it is marked above its alarm's line. */
  const figures = (id: string) =>
    operator.$$eval(`section[aria-labelledby="${id}"] .figures > div`, (divs) =>
      Object.fromEntries(
        divs.map((d) => [
          d.querySelector('dt')!.textContent!.trim(),
          { value: d.querySelector('dd')!.firstChild!.textContent!.trim(), over: d.classList.contains('over') },
        ]),
      ),
    );
  const number = (text: string) => Number(text);

  it('each list page opens with its metrics, from the EMF lines the run’s functions wrote; screenshots of each', async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    await go(operator, '/scan');
    const scan = await figures('m-scan');
    expect(scan['Request → envelope, p99'].value).toMatch(/^\d+(\.\d)? (ms|s)$/);
    expect(scan['Answer seen → envelope, p99'].value).toMatch(/^\d+(\.\d)? (ms|s)$/);
    expect(scan['Envelopes after the deadline']).toEqual({ value: '0', over: false });
    expect(number(scan['Slots held, max'].value)).toBeGreaterThanOrEqual(0);
    expect(await operator.$$eval('section[aria-labelledby="m-scan"] figure.chart svg', (s) => s.length)).toBe(2);
    await (await operator.$('section[aria-labelledby="m-scan"]'))!.screenshot({
      path: path.join(SCREENSHOTS, 'console-metrics-scan-1280.png'),
    });

    await go(operator, '/sync');
    const sync = await figures('m-sync');
    expect(number(sync['Attempts settled'].value)).toBeGreaterThanOrEqual(1);
    // The faulted attempt above: partial, its cause the failed section's code.
    const notSucceeded = number(sync['Attempts not succeeded'].value);
    expect(notSucceeded).toBeGreaterThanOrEqual(1);
    // Marked exactly where the AWS alarm fires: 5 an hour by default (ALARM_SYNC_NOT_SUCCEEDED_PER_HOUR).
    expect(sync['Attempts not succeeded'].over).toBe(notSucceeded >= 5);
    expect(await operator.$eval('section[aria-labelledby="m-sync"]', (s) => s.textContent)).toContain('UPSTREAM_ERROR');
    expect(await operator.$$eval('section[aria-labelledby="m-sync"] rect.s-partial', (r) => r.length)).toBeGreaterThan(
      0,
    );
    await (await operator.$('section[aria-labelledby="m-sync"]'))!.screenshot({
      path: path.join(SCREENSHOTS, 'console-metrics-sync-1280.png'),
    });

    // The download made above is announced by the notifier through the stream: its lag becomes a data point.
    let failures: Awaited<ReturnType<typeof figures>> = {};
    for (let i = 0; i < 40 && !/\d/.test(failures['Notifier lag, p99']?.value ?? ''); i++) {
      if (i) await new Promise((r) => setTimeout(r, 500));
      await go(operator, '/failures');
      failures = await figures('m-failures');
    }
    expect(failures['Notifier lag, p99'].value).toMatch(/^\d+(\.\d)? (ms|s)$/);
    await (await operator.$('section[aria-labelledby="m-failures"]'))!.screenshot({
      path: path.join(SCREENSHOTS, 'console-metrics-failures-1280.png'),
    });
  });
});

describe('looks and manners', () => {
  it('has no serious or critical axe violations; works at 390 px; screenshots at 1280 and 390', async () => {
    // A download needing a decision whose name has no place to break (other suites leave such names behind):
    // the failures page must wrap it, not scroll sideways.
    const long = await call('POST', '/downloads', { infohashes: [v1().infohash], name: `long-${'x'.repeat(400)}` });
    await downloadsStore().store.setDownloadState(long.body.id as string, long.body.state, 'stuck');
    for (const [name, p] of [
      ['console-scan', '/scan'],
      ['console-scan-job', `/scan/${made.job}`],
      ['console-sync', '/sync'],
      ['console-sync-user', `/sync/${made.user}`],
      ['console-failures', '/failures'],
    ] as Array<[string, string]>) {
      expect((await go(operator, p)).status()).toBe(200);
      expect([name, await seriousViolations(operator)]).toEqual([name, []]);
      await screenshot(operator, name, 1280, 900);
      await screenshot(operator, name, 390, 844);
      // Nothing wider than the phone's screen.
      expect([name, await operator.evaluate(() => document.documentElement.scrollWidth)]).toEqual([name, 390]);
      await operator.setViewport({ width: 1280, height: 900 });
    }
  });
});

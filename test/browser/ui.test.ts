/// <reference lib="dom" />
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, HTTPResponse, Page } from 'puppeteer-core';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { awsClients } from '../../lib/aws/clients';
import { downloadKey } from '../../lib/downloads/keys';
import { config } from '../../lib/config';
import { handler as pagesHandler } from '../../functions/web/pages';
import { handler as actionsHandler } from '../../functions/web/actions';
import { newId } from '../../lib/ident';
import { createFormat } from '../../lib/i18n';
import { assertOneActivePerHash, downloadsStore, v1, v2 } from '../support/downloads';
import { launchBrowser, screenshot, seriousViolations } from '../support/browser';
import { call } from '../support/http';
import { httpUrl } from '../support/stack';
import { invokePage } from '../support/web';

/**
 * The web UI in real Chromium against the real stack (serverless offline, the
 * session authorizer, DynamoDB Local, the torrent-client emulator). One browser
 * for the file; the tests run in order and share its signed-in session.
 */
jest.setTimeout(60_000);

const base = httpUrl('/').replace(/\/$/, '');
const tag = `ui-${Date.now().toString(36)}`;
const { aws, table } = downloadsStore();
let browser: Browser;
let page: Page;

const state = (id: string) => call('GET', `/downloads/${id}`).then((r) => r.body.state as string);
const make = async (body: Record<string, unknown>) =>
  (await call('POST', '/downloads', body)).body as {
    id: string;
    infohashes: Array<{ infohash: string; kind: string }>;
  };

async function go(path: string): Promise<HTTPResponse> {
  const res = await page.goto(`${base}${path}`, { waitUntil: 'domcontentloaded' });
  return res!;
}
async function submit(selector: string): Promise<HTTPResponse | null> {
  const [res] = await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click(selector)]);
  return res;
}
const text = (selector: string) => page.$eval(selector, (el) => (el as HTMLElement).innerText);

beforeAll(async () => {
  browser = await launchBrowser();
  page = await browser.newPage();
  await browser
    .defaultBrowserContext()
    .overridePermissions(base, ['clipboard-read', 'clipboard-write', 'clipboard-sanitized-write']);
  page.on('dialog', (d) => {
    throw new Error(`a dialog opened: ${d.message()}`);
  });
});

afterAll(async () => {
  await browser?.close();
  aws.dynamodb.destroy();
});

describe('sessions', () => {
  it('sends a browser without a session to sign-in, and signs in with an API token into an HttpOnly, SameSite=Strict cookie', async () => {
    const res = await go('/');
    expect(new URL(res.url()).pathname).toBe('/signin');
    await page.type('#token', process.env.TEST_TOKEN_ALL!);
    await submit('form.signin button[type=submit]');
    expect(new URL(page.url()).pathname).toBe('/');
    expect(page.url()).not.toContain(process.env.TEST_TOKEN_ALL!);
    const cookies = await page.cookies();
    const session = cookies.find((c) => c.name === 'tss_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/', secure: false });
    // An expiry, about 8 hours ahead.
    expect(session.expires * 1000 - Date.now()).toBeGreaterThan(7 * 3600_000);
    expect(await page.content()).not.toContain(process.env.TEST_TOKEN_ALL!);
  });
});

describe('list and card', () => {
  let hybrid: Awaited<ReturnType<typeof make>>;

  beforeAll(async () => {
    const [a, b] = [v1(), v2()];
    hybrid = await make({ magnet: `magnet:?xt=urn:btih:${a.infohash}&xt=urn:btmh:1220${b.infohash}&dn=${tag}-hybrid` });
    await make({ infohashes: [v1().infohash], name: `${tag}-other` });
  });

  it('searches by name fragment and by a 6-character infohash prefix', async () => {
    await go('/');
    await page.type('#q', tag);
    await submit('form.search button[type=submit]');
    const names = await page.$$eval('table.list td.name a', (as) => as.map((a) => a.textContent));
    expect(names).toEqual([`${tag}-other`, `${tag}-hybrid`]); // newest first

    const prefix = hybrid.infohashes[1].infohash.slice(0, 6);
    await go('/');
    await page.type('#q', prefix);
    await submit('form.search button[type=submit]');
    expect(await page.$$eval('table.list td.name a', (as) => as.map((a) => a.textContent))).toContain(`${tag}-hybrid`);
    expect(await page.$$eval('table.list td.name a', (as) => as.map((a) => a.textContent))).not.toContain(
      `${tag}-other`,
    );
  });

  it("shows a hybrid download's two hashes with their kinds; each copy button copies exactly its hash", async () => {
    await go(`/download/${hybrid.id}`);
    const rows = await page.$$eval('ul.hashes li', (lis) =>
      lis.map((li) => [li.querySelector('.kind')!.textContent, li.querySelector('code')!.textContent]),
    );
    expect(rows).toEqual(hybrid.infohashes.map((h) => [h.kind, h.infohash]));
    const buttons = await page.$$('ul.hashes button.copy');
    expect(buttons).toHaveLength(2);
    for (const [i, button] of buttons.entries()) {
      await page.evaluate(() => navigator.clipboard.writeText('-'));
      await button.click();
      await page.waitForFunction((b) => b.textContent === 'Copied', {}, button);
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(hybrid.infohashes[i].infohash);
    }
    await page.click('section button.copy[aria-label="Copy magnet link"]');
    await page.waitForFunction(
      () => document.querySelector('button[aria-label="Copy magnet link"]')!.textContent === 'Copied',
    );
    expect(await page.evaluate(() => navigator.clipboard.readText())).toMatch(
      new RegExp(`^magnet:\\?xt=urn:btih:${hybrid.infohashes[0].infohash}&xt=urn:btmh:1220`),
    );
  });

  it('retries a failed download and shows its new state', async () => {
    const d = await make({ infohashes: [v1().infohash], name: `${tag}-failed` });
    await call('POST', `/downloads/${d.id}/state`, { state: 'failed' });
    await go(`/download/${d.id}`);
    expect(await text('dl.facts .state')).toBe('Failed');
    await submit(`form[action="/download/${d.id}/retry"] button`);
    expect(new URL(page.url()).pathname).toBe(`/download/${d.id}`);
    expect(await text('dl.facts .state')).toBe('Queued');
    expect(await state(d.id)).toBe('queued');
  });

  it('filters by state, adds infohashes and cancels from the card', async () => {
    const d = await make({ infohashes: [v1().infohash], name: `${tag}-actions` });
    await go(`/?q=${tag}-actions`);
    await page.select('#state', 'failed');
    await submit('form.search button[type=submit]');
    expect(await page.$$('table.list td.name a')).toHaveLength(0);
    await page.select('#state', 'queued');
    await submit('form.search button[type=submit]');
    expect(await page.$$eval('table.list td.name a', (as) => as.map((a) => a.textContent))).toEqual([`${tag}-actions`]);

    const extra = v2();
    await go(`/download/${d.id}`);
    await page.type('#infohashes', extra.infohash.toUpperCase());
    await submit(`form[action="/download/${d.id}/infohashes"] button`);
    expect(await page.$$eval('ul.hashes code', (cs) => cs.map((c) => c.textContent))).toEqual([
      d.infohashes[0].infohash,
      extra.infohash,
    ]);
    await submit(`form[action="/download/${d.id}/cancel"] button`);
    expect(await text('dl.facts .state')).toBe('Cancelled');
    expect(await state(d.id)).toBe('cancelled');
  });

  it('a retry refused because another download owns the hash shows the reason and links to the owner', async () => {
    const h = v1();
    const first = await make({ infohashes: [h.infohash], name: `${tag}-first` });
    await call('POST', `/downloads/${first.id}/state`, { state: 'failed' });
    const owner = await make({ infohashes: [h.infohash], name: `${tag}-owner` });
    await go(`/download/${first.id}`);
    const res = await submit(`form[action="/download/${first.id}/retry"] button`);
    expect(res!.status()).toBe(409);
    expect(await text('.notice')).toContain('ACTIVE_EXISTS');
    expect(await page.$eval('.notice a', (a) => a.getAttribute('href'))).toBe(`/download/${owner.id}`);
    expect(await state(first.id)).toBe('failed');
    await assertOneActivePerHash(aws, table, [h.infohash]);
  });
});

describe('review', () => {
  it('activates the chosen candidate; a refusal names the current owner', async () => {
    const h = v1();
    const older = await make({ infohashes: [h.infohash], name: `${tag}-older` });
    await call('POST', `/downloads/${older.id}/state`, { state: 'cancelled' });
    const newer = await make({ infohashes: [h.infohash, v2().infohash], name: `${tag}-newer` });
    await call('POST', `/downloads/${newer.id}/state`, { state: 'failed' });

    await go(`/review/${newer.id}`);
    const candidates = await page.$$eval('input[name=candidate_id]', (inputs) =>
      inputs.map((i) => (i as HTMLInputElement).value),
    );
    expect(candidates).toEqual([newer.id, older.id]);
    await page.click(`#c-${older.id}`);
    await submit('form[action^="/review/"] button[type=submit]');
    expect(new URL(page.url()).pathname).toBe(`/download/${older.id}`);
    expect(await state(older.id)).toBe('queued');

    // Now `older` owns the hash: making `newer` active is refused, naming it.
    await go(`/review/${newer.id}`);
    await page.click(`#c-${newer.id}`);
    const res = await submit('form[action^="/review/"] button[type=submit]');
    expect(res!.status()).toBe(409);
    expect(await page.$eval('.notice a', (a) => a.getAttribute('href'))).toBe(`/download/${older.id}`);
    expect(await state(newer.id)).toBe('failed');
    await assertOneActivePerHash(aws, table, [h.infohash]);
  });
});

describe('malformed ids', () => {
  it('/download/12345 and /review/12345 are 404 pages', async () => {
    for (const path of ['/download/12345', '/review/12345', `/download/${newId()}`]) {
      const res = await go(path);
      expect([path, res.status()]).toEqual([path, 404]);
      expect(await text('h1')).toBe('Not found');
    }
  });

  it('costs 0 DynamoDB calls, page or form, candidate_id included (the deployed handlers, in-process, counted)', async () => {
    let calls = 0;
    const { dynamodb } = awsClients(config());
    dynamodb.middlewareStack.add((next) => async (args) => (calls++, next(args)), {
      step: 'initialize',
      name: 'countWebCalls',
    });
    const ctx = { principal: 'test-all', scopes: 'downloads:read downloads:write', csrf: 'k'.repeat(24) };
    const invoke = (h: typeof pagesHandler, method: string, routeKey: string, id: string, body?: string) =>
      invokePage(h, ctx, { method, routeKey, params: { id }, body });
    for (const id of ['12345', '01arz3ndektsv4rrffq69g5fa', '../../etc/passwd']) {
      expect((await invoke(pagesHandler, 'GET', 'GET /download/{id}', id)).statusCode).toBe(404);
      expect((await invoke(pagesHandler, 'GET', 'GET /review/{id}', id)).statusCode).toBe(404);
      expect(
        (await invoke(actionsHandler, 'POST', 'POST /download/{id}/retry', id, `csrf=${ctx.csrf}`)).statusCode,
      ).toBe(404);
    }
    // A good page id with a malformed candidate: also refused before any read.
    expect(
      (await invoke(actionsHandler, 'POST', 'POST /review/{id}', newId(), `csrf=${ctx.csrf}&candidate_id=12345`))
        .statusCode,
    ).toBe(404);
    expect(calls).toBe(0);
    // The counter works: a well-formed unknown id costs exactly one read.
    expect((await invoke(pagesHandler, 'GET', 'GET /download/{id}', newId())).statusCode).toBe(404);
    expect(calls).toBe(1);
  });
});

describe('looks and manners', () => {
  it('has no serious or critical axe violations on the list, card and review pages; writes screenshots at desktop and phone widths', async () => {
    // A review with two candidates, and a progress bar as the poll reports it (written here as the poll writes it).
    const shared = v1();
    const earlier = await make({ infohashes: [shared.infohash], name: `${tag} Sintel (2010) 720p` });
    await call('POST', `/downloads/${earlier.id}/state`, { state: 'cancelled' });
    const d = await make({ infohashes: [shared.infohash, v2().infohash], name: `${tag} Sintel (2010) 1080p` });
    await call('POST', `/downloads/${d.id}/state`, { state: 'failed' });
    const running = await make({ infohashes: [v1().infohash], name: `${tag} Big Buck Bunny` });
    await aws.documents.send(
      new UpdateCommand({
        TableName: table,
        Key: downloadKey(running.id),
        UpdateExpression: 'SET progress = :p',
        ExpressionAttributeValues: { ':p': 0.42 },
      }),
    );
    const pages: Array<[string, string]> = [
      ['list', '/'],
      ['card', `/download/${d.id}`],
      ['review', `/review/${d.id}`],
    ];
    for (const [name, path] of pages) {
      await page.setViewport({ width: 1280, height: 900 });
      await go(path);
      expect([name, await seriousViolations(page)]).toEqual([name, []]);
      await screenshot(page, name, 1280, 900);
      await screenshot(page, name, 390, 844);
      // Phone width: nothing wider than the viewport.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    }
    // Times: formatted on the server in the stack's UI_TIME_ZONE (Moscow) and the page's language; UTC on hover.
    await go(`/download/${d.id}`);
    await go(`/download/${running.id}`);
    expect(await page.$eval('dl.facts progress', (p) => (p as HTMLProgressElement).value)).toBeCloseTo(0.42);
    const t = await page.$eval('time', (el) => ({
      title: el.getAttribute('title'),
      datetime: el.getAttribute('datetime')!,
      text: el.textContent,
    }));
    expect(t.title).toBe(t.datetime);
    expect(t.text).toBe(createFormat('en', 'Europe/Moscow').dateTime(t.datetime));
  });

  it('is keyboard-usable: Tab reaches the search box and Enter submits it', async () => {
    await go('/');
    await page.setViewport({ width: 1280, height: 900 });
    for (let i = 0; i < 12 && (await page.evaluate(() => document.activeElement?.id)) !== 'q'; i++)
      await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('q');
    await page.keyboard.type(tag);
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(new URL(page.url()).searchParams.get('q')).toBe(tag);
  });

  it('shows hostile names and search terms as text, never as markup', async () => {
    const hostile = `${tag} <img src=x onerror=alert(1)> "'><svg onload=alert(2)>`;
    const d = await make({ infohashes: [v1().infohash], name: hostile });
    await go(`/download/${d.id}`);
    expect(await text('h1')).toBe(hostile);
    expect(await page.$$('main img, main svg')).toHaveLength(0);
    await go(`/?q=${encodeURIComponent('"><script>alert(3)</script>')}`);
    expect(await page.$eval('#q', (i) => (i as HTMLInputElement).value)).toBe('"><script>alert(3)</script>');
    expect(await page.$$('main script')).toHaveLength(0);
  });
});

describe('cross-site forms and sign-out', () => {
  it('refuses a forged cross-site form post, and writes nothing', async () => {
    const d = await make({ infohashes: [v1().infohash], name: `${tag}-target` });
    // Another origin (same host, other port: same-site, so the cookie IS sent and only the origin and token checks stand).
    const evil = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        `<form id="f" method="post" action="${base}/download/${d.id}/cancel"><input name="csrf" value="guess"></form><script>document.getElementById('f').submit()</script>`,
      );
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    try {
      const [res] = await Promise.all([
        page.waitForResponse((r) => r.url() === `${base}/download/${d.id}/cancel`),
        page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`),
      ]);
      expect(res.status()).toBe(403);
      expect(await state(d.id)).toBe('queued');
    } finally {
      evil.close();
    }
  });

  it('signs out, after which every page redirects to sign-in', async () => {
    await go('/');
    await submit('form[action="/signout"] button');
    expect(new URL(page.url()).pathname).toBe('/signin');
    expect((await page.cookies()).find((c) => c.name === 'tss_session' && c.value !== '')).toBeUndefined();
    for (const path of ['/', `/download/${newId()}`, `/review/${newId()}`]) {
      await go(path);
      expect(new URL(page.url()).pathname).toBe('/signin');
    }
  });
});

/// <reference lib="dom" />
import type { Browser, HTTPResponse, Page } from 'puppeteer-core';
import { createFormat, hourStart } from '../../lib/i18n';
import { newId } from '../../lib/ident';
import { launchBrowser, screenshot, seriousViolations, signIn } from '../support/browser';
import { v1 } from '../support/downloads';
import { call } from '../support/http';
import { httpUrl, invokeScheduled } from '../support/stack';

/**
 * The people who use it (issue 43), in real Chromium against the real stack,
 * whose UI_TIME_ZONE is Europe/Moscow (test/support/globalSetup.ts): Russian
 * and English pages whatever the browser's own zone, a console for each role,
 * and phones at 360 and 390 px.
 */
jest.setTimeout(120_000);

const base = httpUrl('/').replace(/\/$/, '');
const ZONE = 'Europe/Moscow';
let browser: Browser;
/** Made once: a download, and a sync user whose attempt has step rows (the Step column's content). */
const made = { download: '', user: '' };

interface Person {
  token: string;
  /** The browser's Accept-Language. */
  language: string;
  /** The browser's own time zone: never the stack's. */
  zone: string;
}

async function signedIn(p: Person): Promise<Page> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setExtraHTTPHeaders({ 'accept-language': p.language });
  await page.emulateTimezone(p.zone);
  await signIn(page, p.token);
  return page;
}
const go = async (page: Page, path: string): Promise<HTTPResponse> =>
  (await page.goto(`${base}${path}`, { waitUntil: 'domcontentloaded' }))!;
const navLinks = (page: Page) => page.$$eval('nav.sections a', (as) => as.map((a) => a.getAttribute('href')));
const langOf = (page: Page) => page.$eval('html', (h) => h.getAttribute('lang'));
const times = (page: Page) =>
  page.$$eval('main time', (ts) => ts.map((t) => ({ iso: t.getAttribute('datetime')!, text: t.textContent! })));

const ru = (zone = 'America/New_York'): Person => ({
  token: process.env.TEST_TOKEN_ALL!,
  language: 'ru-RU,ru;q=0.9',
  zone,
});
const en = (zone = 'Asia/Tokyo'): Person => ({
  token: process.env.TEST_TOKEN_ALL!,
  language: 'en-US,en;q=0.9',
  zone,
});

beforeAll(async () => {
  browser = await launchBrowser();
  const created = await call('POST', '/downloads', { infohashes: [v1().infohash], name: `people-${Date.now()}` });
  expect(created.status).toBe(201);
  made.download = created.body.id as string;
  const user = newId();
  expect((await call('POST', '/sync/connections', { user_id: user, token: `t.${user}` })).status).toBe(201);
  expect((await invokeScheduled('syncTick')).FunctionError).toBeUndefined();
  let state = 'running';
  for (let i = 0; i < 400 && state === 'running'; i++) {
    await new Promise((r) => setTimeout(r, 250));
    state = ((await call('GET', `/sync/${user}/hourly`)).body?.state as string | undefined) ?? 'running';
  }
  expect(state).not.toBe('running');
  made.user = user;
});
afterAll(async () => {
  await browser?.close();
});

describe('language and time zone', () => {
  it('Russian in New York and English in Tokyo both read Moscow times, formatted on the server', async () => {
    for (const [person, lang] of [
      [ru(), 'ru'],
      [en(), 'en'],
    ] as const) {
      const page = await signedIn(person);
      await go(page, `/sync/${made.user}`);
      expect(await langOf(page)).toBe(lang);
      const f = createFormat(lang, ZONE);
      const shown = await times(page);
      expect(shown.length).toBeGreaterThan(2);
      for (const t of shown) expect([t.iso, t.text]).toEqual([t.iso, f.dateTime(t.iso)]);
      expect(await page.$eval('p.zone', (p) => p.textContent)).toContain('Europe/Moscow (GMT+3)');
      // The strip's selected hour is the hour of the attempt's start in the same zone, and says so.
      const cell = await page.$eval('li.cell.sel', (li) => ({
        from: Number(li.getAttribute('data-hour')),
        label: li.querySelector('a')!.getAttribute('title')!,
      }));
      const started = shown[0].iso;
      expect(cell.from).toBe(hourStart(Date.parse(started), ZONE));
      expect(cell.label.startsWith(f.dayHour(cell.from))).toBe(true);
      await page.browserContext().close();
    }
  });

  it('renders the same text whatever the browser’s zone', async () => {
    const texts: string[] = [];
    for (const zone of ['America/New_York', 'Pacific/Auckland']) {
      const page = await signedIn(ru(zone));
      await go(page, `/sync/${made.user}`);
      texts.push(await page.$eval('main', (m) => m.innerText));
      await page.browserContext().close();
    }
    expect(texts[0]).toBe(texts[1]);
    expect(texts[0]).toContain('Попытки по часам');
  });

  it('a person switches language on the page; the choice outlives the browser’s preference', async () => {
    const page = await signedIn(ru());
    expect(await page.$eval('h1', (h) => h.textContent)).toBe('Загрузки');
    await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('.langs a[lang="en"]')]);
    expect(await langOf(page)).toBe('en');
    expect(await page.$eval('h1', (h) => h.textContent)).toBe('Downloads');
    expect(new URL(page.url()).searchParams.get('lang')).toBe('en');
    await go(page, '/scan');
    expect([await langOf(page), await page.$eval('h1', (h) => h.textContent)]).toEqual(['en', 'Scan jobs']);
    await page.browserContext().close();
  });

  it('is axe-clean in both languages', async () => {
    for (const person of [ru(), en()]) {
      const page = await signedIn(person);
      for (const path of ['/', '/scan', '/sync', `/sync/${made.user}`, '/failures', `/download/${made.download}`]) {
        expect((await go(page, path)).status()).toBe(200);
        expect([person.language, path, await seriousViolations(page)]).toEqual([person.language, path, []]);
      }
      await page.browserContext().close();
    }
  });
});

describe('a console for each role', () => {
  const person = (token: string): Person => ({ token, language: 'ru-RU', zone: 'America/New_York' });

  it.each([
    ['scan-only', '/scan', 'TEST_TOKEN_SCAN_READ', ['/scan'], ['/sync', `/sync/${newId()}`, '/failures']],
    ['sync-only', '/sync', 'TEST_TOKEN_SYNC_READ', ['/sync'], ['/scan', '/failures', `/download/${newId()}`]],
    ['downloads-only', '/', 'TEST_TOKEN_DOWNLOADS_READ', ['/', '/failures'], ['/scan', '/sync']],
  ])(
    '%s lands on %s, sees only its sections, and reads a 403 page on the others',
    async (_n, home, env, nav, closed) => {
      const page = await signedIn(person(process.env[env]!));
      expect(new URL(page.url()).pathname).toBe(home);
      expect(await navLinks(page)).toEqual(nav);
      for (const path of closed) {
        const res = await go(page, path);
        const body = await page.$eval('main', (m) => m.innerText);
        expect([path, res.status(), await langOf(page)]).toEqual([path, 403, 'ru']);
        expect(body).toContain('Недоступно вашему токену');
        expect(body).toMatch(/нужно право (scan|sync|downloads):read/);
      }
      // The start page sends it home; it signs out like anyone.
      expect(new URL((await go(page, '/')).url()).pathname).toBe(home);
      await Promise.all([
        page.waitForNavigation({ waitUntil: 'domcontentloaded' }),
        page.click('form[action="/signout"] button'),
      ]);
      expect(new URL(page.url()).pathname).toBe('/signin');
      await page.browserContext().close();
    },
  );
});

describe('phones', () => {
  const pages = () => [
    ['list', '/'],
    ['card', `/download/${made.download}`],
    ['scan', '/scan'],
    ['sync', '/sync'],
    ['sync-user', `/sync/${made.user}`],
    ['failures', '/failures'],
  ];

  it('every page at 360 and 390 px: no sideways scroll, no cell hidden, ids whole within their segments', async () => {
    for (const person of [ru(), en()]) {
      const page = await signedIn(person);
      for (const width of [360, 390]) {
        await page.setViewport({ width, height: 800 });
        for (const [name, path] of pages()) {
          await go(page, path);
          const look = await page.evaluate(() => ({
            scroll: document.documentElement.scrollWidth,
            hidden: Array.from(document.querySelectorAll('table.list td'))
              .filter((td) => td.childNodes.length > 0 && (td as HTMLElement).offsetWidth === 0)
              .map((td) => td.getAttribute('data-label')),
            // An id segment on two lines would be a break inside it.
            split: Array.from(document.querySelectorAll('.nb'))
              .filter((s) => s.getClientRects().length > 1)
              .map((s) => s.textContent),
          }));
          expect([person.language, name, width, look]).toEqual([
            person.language,
            name,
            width,
            { scroll: width, hidden: [], split: [] },
          ]);
        }
        // The Step column: each step's start and duration, on screen.
        await go(page, `/sync/${made.user}`);
        const steps = await page.$$eval('td.step-cell', (tds) =>
          tds.map((td) => ({ shown: (td as HTMLElement).offsetWidth > 0, text: (td as HTMLElement).innerText })),
        );
        expect(steps.every((s) => s.shown)).toBe(true);
        expect(steps.filter((s) => /\d\d:\d\d:\d\d · [\d.,]+ (ms|s|мс|с)$/.test(s.text)).length).toBeGreaterThan(0);
        // The copy buttons of ids stay.
        await go(page, `/download/${made.download}`);
        expect(
          await page.$$eval('button.copy', (b) => b.filter((x) => (x as HTMLElement).offsetWidth > 0).length),
        ).toBe(2);
      }
      await page.browserContext().close();
    }
  });

  it('screenshots: Russian at 390 px and English at 1280 px of the list, the card and the console pages', async () => {
    for (const [person, prefix, width, height] of [
      [ru(), 'ru', 390, 844],
      [en(), 'en', 1280, 900],
    ] as const) {
      const page = await signedIn(person);
      for (const [name, path] of pages()) {
        await go(page, path);
        await screenshot(page, `${prefix}-${name}`, width, height);
      }
      await page.browserContext().close();
    }
  });
});

/// <reference lib="dom" />
import type { Browser, Page } from 'puppeteer-core';
import { ACCOUNTS, portfolioOf } from '../../emulator/brokerage/dataset';
import { newId } from '../../lib/ident';
import { createFormat, exactNumber } from '../../lib/i18n';
import { HOUR_MS } from '../../lib/sync/model';
import { multiplyDecimals, nanosToDecimal, type Decimal } from '../../lib/sync/money';
import path from 'node:path';
import { launchBrowser, screenshot, SCREENSHOTS, seriousViolations, signIn } from '../support/browser';
import { holdingsStack } from '../support/holdings-stack';
import { nanosOf } from '../support/holdings-fixture';
import { httpUrl } from '../support/stack';

/**
 * The console's holdings sections (GET /sync/{user}) in real Chromium, both languages: positions as a sync
 * stored them, the stale notice after a failed portfolio step, the next 90 days of payments with the chart.
 * The payments are dated from the real day (the page's window is today in UI_TIME_ZONE), the rest from the
 * emulator's dataset (test/support/holdings-stack.ts).
 */
jest.setTimeout(120_000);

const base = httpUrl('/').replace(/\/$/, '');
const h = holdingsStack();
const DAY = 86_400_000;
const realNow = () => Math.round(performance.timeOrigin + performance.now());
const user = newId();
const account = ACCOUNTS.find((a) => a.status === 'ACCOUNT_STATUS_OPEN' && a.type === 'ACCOUNT_TYPE_TINKOFF')!;
const held = portfolioOf(account.id).positions;
const share = held.find((p) => p.instrumentType === 'share')!;
const bond = held.find((p) => p.instrumentType === 'bond')!;
const day = (offset: number) => new Date(realNow() + offset * DAY).toISOString().slice(0, 10) + 'T00:00:00.000Z';
let browser: Browser;
let page: Page;

beforeAll(async () => {
  await h.start();
  await h.connect(user);
  expect((await h.sync(user)).head.state).toBe('succeeded');
  // Payments inside the page's window, whatever day the test runs: a dividend in 10 days, coupons in 40 and 70.
  await h.data.putEvents(
    user,
    share.instrumentUid,
    [{ dividend_net: { currency: 'rub', value: '12.34' as Decimal }, payment_date: day(10), record_date: day(3) }],
    [],
    Date.now(),
  );
  await h.data.putEvents(
    user,
    bond.instrumentUid,
    [],
    [40, 70].map((d, i) => ({
      instrument_id: bond.instrumentUid,
      event_number: i + 1,
      event_type: 'EVENT_TYPE_CPN',
      fix_date: day(d - 1),
      pay_date: day(d),
      pay_one_bond: { currency: 'rub', value: '35.4' as Decimal },
    })),
    Date.now(),
  );
  // Then a portfolio step that fails: the page keeps the positions and says so.
  h.brokerage.faults['OperationsService/GetPortfolio'] = { error: 40002 };
  h.later(HOUR_MS + 60_000);
  await h.sync(user);
  h.brokerage.faults = {};
  browser = await launchBrowser();
  const context = await browser.createBrowserContext();
  page = await context.newPage();
  await signIn(page, process.env.TEST_TOKEN_SYNC_READ!);
});
afterAll(async () => {
  await browser?.close();
  await h.stop();
});

const text = (selector: string) => page.$eval(selector, (e) => (e as HTMLElement).innerText);

it.each(['en', 'ru'] as const)(
  '%s: positions, the stale notice, the payments and their chart; axe clean at 1280 and 390 px',
  async (lang) => {
    const res = await page.goto(`${base}/sync/${user}?lang=${lang}`, { waitUntil: 'domcontentloaded' });
    expect(res!.status()).toBe(200);
    const positions = await text('section[aria-labelledby="positions"]');
    const payments = await text('section[aria-labelledby="payments"]');
    expect(positions).toContain(lang === 'en' ? 'Positions' : 'Позиции');
    expect(payments).toContain(lang === 'en' ? 'Payments in the next 90 days' : 'Выплаты в ближайшие 90 дней');
    // Every position of the account, its quantity and price digit for digit in the page's language.
    for (const p of held) {
      expect(positions).toContain(p.ticker);
      expect(positions).toContain(exactNumber(lang, nanosToDecimal(nanosOf(p.currentPrice)), 2));
    }
    // The failed refresh is said, with its code; the synced time is in UI_TIME_ZONE (the stack's Europe/Moscow).
    expect(positions).toContain('INSUFFICIENT_RIGHTS');
    const synced = await page.$eval('section[aria-labelledby="positions"] p.muted time', (t) => [
      t.getAttribute('datetime')!,
      t.textContent!,
    ]);
    expect(synced[1]).toBe(createFormat(lang, 'Europe/Moscow').dateTime(synced[0]));
    // The expected amounts: per unit × quantity held, exact.
    const dividend = multiplyDecimals('12.34', nanosToDecimal(nanosOf(share.quantity)));
    expect(payments).toContain(`${exactNumber(lang, dividend, 2)} RUB`);
    const coupon = multiplyDecimals('35.4', nanosToDecimal(nanosOf(bond.quantity)));
    expect(payments).toContain(`${exactNumber(lang, coupon, 2)} RUB`);
    expect(await page.$$eval('section[aria-labelledby="payments"] svg rect.bar', (r) => r.length)).toBeGreaterThan(0);
    expect(await page.$eval('section[aria-labelledby="payments"] svg', (s) => s.getAttribute('aria-label'))).toMatch(
      /RUB/,
    );

    for (const width of [1280, 390]) {
      await screenshot(page, `console-holdings-${lang}`, width, width === 390 ? 844 : 900);
      expect([lang, width, await seriousViolations(page)]).toEqual([lang, width, []]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(width);
      // The two sections' first screenful each, to look at (the full page is long).
      for (const id of ['positions', 'payments']) {
        const box = (await (await page.$(`section[aria-labelledby="${id}"]`))!.boundingBox())!;
        await page.screenshot({
          path: path.join(SCREENSHOTS, `console-holdings-${id}-${lang}-${width}.png`),
          clip: { x: 0, y: box.y, width, height: Math.min(box.height, 900) },
        });
      }
    }
    await page.setViewport({ width: 1280, height: 900 });
  },
);

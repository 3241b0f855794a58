/// <reference lib="dom" />
import type { Browser, Page } from 'puppeteer-core';
import { DynamoDownloadStore } from '../../lib/downloads/dynamodb-store';
import { downloadsStore, v1 } from '../support/downloads';
import { launchBrowser, screenshot, seriousViolations, signIn } from '../support/browser';
import { call } from '../support/http';
import { httpUrl } from '../support/stack';

/**
 * The card of a download that does not move (lib/web/download-lifecycle.ts) in real Chromium against the
 * stack, in both languages at 390 px: the warning with how long it stood still and a Keep waiting form that
 * works (with its form token), and the reason once a timeout ended it. The warning is written by the store's
 * own guarded write, with a clock set 55 minutes back, as the poll would have.
 */
jest.setTimeout(90_000);

const base = httpUrl('/').replace(/\/$/, '');
const { aws, table } = downloadsStore();
let browser: Browser;
let page: Page;
const ago = (ms: number) => () => Date.now() - ms;
const storeAt = (now: () => number) => new DynamoDownloadStore({ documents: aws.documents, table, now });

beforeAll(async () => {
  browser = await launchBrowser();
  page = await browser.newPage();
  await signIn(page);
});
afterAll(async () => {
  await browser?.close();
  aws.dynamodb.destroy();
});

async function warned(name: string, reason: 'no_metadata' | 'stalled', stillMs: number): Promise<string> {
  const { body } = await call('POST', '/downloads', { infohashes: [v1().infohash], name });
  // The clock as the poll would have left it: an activation `stillMs` ago set progress_at then.
  const active = await storeAt(ago(stillMs)).activateIfNoOtherActive(body.id, 'downloading');
  await storeAt(ago(0)).warnIfNoProgressSince(body.id, reason, active.progress_at!);
  return body.id as string;
}

it('shows the warning and a working Keep waiting button, and the failure reason, in en and ru at 390 px', async () => {
  const meta = await warned('lifecycle-no-metadata', 'no_metadata', 55 * 60_000);
  const stalled = await warned('lifecycle-stalled', 'stalled', 6 * 3600_000 + 60_000);
  await page.setViewport({ width: 390, height: 844 });

  const expected = {
    en: { meta: 'No metadata for 55 min', stalled: 'No progress for 6 hr', button: 'Keep waiting', ended: 'Ended:' },
    ru: {
      meta: 'Нет метаданных уже 55 мин',
      stalled: 'Нет продвижения уже 6 ч',
      button: 'Подождать ещё',
      ended: 'Завершена:',
    },
  };
  for (const lang of ['en', 'ru'] as const) {
    await page.goto(`${base}/download/${meta}?lang=${lang}`, { waitUntil: 'domcontentloaded' });
    const notice = await page.$eval('[data-warning]', (el) => (el as HTMLElement).innerText);
    expect(notice).toContain(expected[lang].meta);
    expect(await page.$eval('[data-warning] button', (el) => el.textContent)).toBe(expected[lang].button);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, `lifecycle-warning-${lang}`, 390, 844);

    await page.goto(`${base}/download/${stalled}?lang=${lang}`, { waitUntil: 'domcontentloaded' });
    expect(await page.$eval('[data-warning]', (el) => (el as HTMLElement).innerText)).toContain(expected[lang].stalled);
  }

  // Keep waiting through the form: the warning goes, the clock restarts.
  await page.goto(`${base}/download/${meta}?lang=en`, { waitUntil: 'domcontentloaded' });
  await Promise.all([page.waitForNavigation({ waitUntil: 'domcontentloaded' }), page.click('[data-warning] button')]);
  expect(new URL(page.url()).pathname).toBe(`/download/${meta}`);
  expect(await page.$('[data-warning]')).toBeNull();
  const after = (await call('GET', `/downloads/${meta}`)).body;
  expect(after.warning).toBeUndefined();
  expect(Date.now() - Date.parse(after.progress_at)).toBeLessThan(60_000);

  // Ended by the timeout: the reason on the card.
  const w = (await storeAt(ago(0)).get(stalled))!;
  await storeAt(ago(0)).failTimedOut(stalled, 'stalled', w.warned_at!);
  for (const lang of ['en', 'ru'] as const) {
    await page.goto(`${base}/download/${stalled}?lang=${lang}`, { waitUntil: 'domcontentloaded' });
    expect(await page.$eval('[data-failure-reason]', (el) => (el as HTMLElement).innerText)).toContain(
      expected[lang].ended,
    );
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    await screenshot(page, `lifecycle-failed-${lang}`, 390, 844);
  }
});

it("shows the disk guard's hold on the card and a marker in the list, in en and ru at 390 px", async () => {
  const { body } = await call('POST', '/downloads', { infohashes: [v1().infohash], name: 'lifecycle-held-for-disk' });
  const GiB = 1024 ** 3;
  await storeAt(ago(0)).setDownloadState(body.id, body.state, 'paused');
  await storeAt(ago(0)).updateDetails(body.id, {
    hold: { reason: 'disk_space', since: new Date().toISOString(), needed_bytes: 42.5 * GiB, free_bytes: 3 * GiB },
  });
  const expected = {
    en: { card: ['Paused: not enough disk space', '42.5\u00a0GiB', '3\u00a0GiB'], list: 'no disk space' },
    ru: { card: ['Приостановлена: не хватает места', '42,5\u00a0ГиБ', '3\u00a0ГиБ'], list: 'нет места' },
  };
  await page.setViewport({ width: 390, height: 844 });
  for (const lang of ['en', 'ru'] as const) {
    await page.goto(`${base}/download/${body.id}?lang=${lang}`, { waitUntil: 'domcontentloaded' });
    const text = await page.$eval('[data-hold]', (el) => (el as HTMLElement).innerText);
    for (const part of expected[lang].card) expect(text).toContain(part);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, `lifecycle-held-${lang}`, 390, 844);

    await page.goto(`${base}/?q=lifecycle-held-for-disk&lang=${lang}`, { waitUntil: 'domcontentloaded' });
    expect(await page.$eval('tr [data-hold]', (el) => el.textContent)).toBe(expected[lang].list);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
  }
  // Cleared: the card says nothing more about it.
  await storeAt(ago(0)).updateDetails(body.id, { hold: null });
  await page.goto(`${base}/download/${body.id}?lang=en`, { waitUntil: 'domcontentloaded' });
  expect(await page.$('[data-hold]')).toBeNull();
});

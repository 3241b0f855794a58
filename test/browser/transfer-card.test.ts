/// <reference lib="dom" />
import type { Browser, Page } from 'puppeteer-core';
import { downloadsStore, v1 } from '../support/downloads';
import { launchBrowser, screenshot, seriousViolations, signIn } from '../support/browser';
import { call } from '../support/http';
import { httpUrl } from '../support/stack';

/**
 * The client's transfer figures (lib/web/download-transfer.ts) in real Chromium against the stack, in both
 * languages at 390 px: the card has them all with "as of", the list the compact line; nothing overflows.
 * The figures are written by the store's own details write, as the poll writes them.
 */
jest.setTimeout(90_000);

const base = httpUrl('/').replace(/\/$/, '');
const { aws, store } = downloadsStore();
let browser: Browser;
let page: Page;
const GiB = 1024 ** 3;

beforeAll(async () => {
  browser = await launchBrowser();
  page = await browser.newPage();
  await signIn(page);
});
afterAll(async () => {
  await browser?.close();
  aws.dynamodb.destroy();
});

it('the card shows every figure and the list a compact line, in en and ru at 390 px', async () => {
  const name = 'transfer-figures-on-the-card';
  const { body } = await call('POST', '/downloads', { infohashes: [v1().infohash], name });
  await store.setDownloadState(body.id, body.state, 'downloading');
  await store.updateDetails(body.id, {
    progress: 0.25,
    transfer: {
      at: new Date().toISOString(),
      figures: {
        size_bytes: 4.5 * GiB,
        downloaded_bytes: 1.125 * GiB,
        dl_speed: 1_572_864,
        up_speed: 20_480,
        eta_s: 7500,
        seeds: 12,
        peers: 3,
        ratio: 0.5,
      },
    },
  });
  const expected = {
    en: {
      size: '4.5\u00a0GiB',
      downloaded: '1.1\u00a0GiB',
      dl_speed: '1.5\u00a0MiB/s',
      up_speed: '20\u00a0KiB/s',
      eta: '2\u00a0h 5\u00a0min',
      peers: '12 / 3',
      ratio: '0.50',
    },
    ru: {
      size: '4,5\u00a0ГиБ',
      downloaded: '1,1\u00a0ГиБ',
      dl_speed: '1,5\u00a0МиБ/с',
      up_speed: '20\u00a0КиБ/с',
      eta: '2\u00a0ч 5\u00a0мин',
      peers: '12 / 3',
      ratio: '0,50',
    },
  };
  await page.setViewport({ width: 390, height: 844 });
  for (const lang of ['en', 'ru'] as const) {
    await page.goto(`${base}/download/${body.id}?lang=${lang}`, { waitUntil: 'domcontentloaded' });
    const shown = await page.$$eval('[data-transfer]', (els) =>
      Object.fromEntries(els.map((el) => [el.getAttribute('data-transfer'), el.textContent])),
    );
    expect(shown).toMatchObject(expected[lang]);
    expect(shown.at).toBeTruthy();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, `transfer-card-${lang}`, 390, 844);

    await page.goto(`${base}/?q=${name}&lang=${lang}`, { waitUntil: 'domcontentloaded' });
    const compact = await page.$eval('tr [data-transfer-compact]', (el) => el.textContent);
    expect(compact).toBe(
      `${expected[lang].size} · ↓\u00a0${expected[lang].dl_speed} · ↑\u00a0${expected[lang].up_speed} · ${expected[lang].eta}`,
    );
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    await screenshot(page, `transfer-list-${lang}`, 390, 844);
  }
});

/// <reference lib="dom" />
import { randomBytes } from 'node:crypto';
import type { Browser, HTTPResponse, Page } from 'puppeteer-core';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { downloadsStore, v1 } from '../support/downloads';
import { launchBrowser, screenshot, seriousViolations, signIn } from '../support/browser';
import { call, emulatorTorrents } from '../support/http';
import { httpUrl } from '../support/stack';

/**
 * The add form's category (decision 459) in real Chromium at 390 px against the stack: the list holds the
 * client's categories under ours (as recorded), a choice lands the torrent in it, a new category is created
 * with its folder, a hostile name is refused beside its field with nothing written.
 */
jest.setTimeout(120_000);

const ROOT = 'torrent-scan-sync';
const base = httpUrl('/').replace(/\/$/, '');
const { aws, table } = downloadsStore();
let browser: Browser;
let page: Page;

const go = async (p: string): Promise<HTTPResponse> =>
  (await page.goto(`${base}${p}`, { waitUntil: 'domcontentloaded' }))!;
async function submit(): Promise<HTTPResponse | null> {
  const [res] = await Promise.all([
    page.waitForNavigation({ waitUntil: 'domcontentloaded' }),
    page.click('.add-download button[type=submit]'),
  ]);
  return res;
}
const text = (selector: string) => page.$eval(selector, (el) => (el as HTMLElement).innerText);
const torrent = async (hash: string) =>
  ((await emulatorTorrents()) as Array<{ hash: string; category?: string; save_path?: string }>).find(
    (t) => t.hash === hash,
  );
async function written(): Promise<[number, number]> {
  let count = 0;
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const out = await aws.documents.send(new ScanCommand({ TableName: table, ExclusiveStartKey, Select: 'COUNT' }));
    count += out.Count ?? 0;
    ExclusiveStartKey = out.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return [count, (await emulatorTorrents()).length];
}

beforeAll(async () => {
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.setViewport({ width: 390, height: 844 });
  await signIn(page);
});
afterAll(async () => {
  await browser?.close();
  aws.dynamodb.destroy();
});

it('lists the recorded categories; the chosen one is the torrent’s and the card’s', async () => {
  const existing = `${ROOT}/b${randomBytes(3).toString('hex')}`;
  expect(
    (await call('POST', '/downloads', { infohashes: [v1().infohash], category: existing, category_save_path: 'Seen' }))
      .status,
  ).toBe(201);
  await go('/?lang=en');
  const options = await page.$$eval('#add-category option', (els) =>
    els.map((e) => [(e as HTMLOptionElement).value, (e as HTMLOptionElement).text]),
  );
  expect(options[0]).toEqual(['', `Default (${ROOT})`]);
  expect(options).toContainEqual([existing, `${existing.slice(ROOT.length + 1)} · folder Seen`]);
  expect(options.at(-1)?.[0]).toBe('+new');

  const hash = v1().infohash;
  await page.type('#add-infohashes', hash);
  await page.select('#add-category', existing);
  expect((await submit())!.status()).toBe(200);
  expect(await text('[data-category]')).toBe(existing);
  expect((await torrent(hash))?.category).toBe(existing);
});

it('creates a new category with its folder from the form', async () => {
  const name = `n${randomBytes(3).toString('hex')}`;
  const hash = v1().infohash;
  await go('/?lang=ru');
  await page.type('#add-infohashes', hash);
  await page.select('#add-category', '+new');
  await page.type('#add-category_new', name);
  await page.type('#add-category_save_path', 'Фильмы/Новые');
  expect((await submit())!.status()).toBe(200);
  expect(await text('[data-category]')).toBe(`${ROOT}/${name}`);
  expect(await torrent(hash)).toMatchObject({ category: `${ROOT}/${name}`, save_path: '/downloads/Фильмы/Новые' });
});

it('refuses hostile names and folders beside their fields, nothing written; usable at 390 px (en, ru)', async () => {
  for (const lang of ['en', 'ru'] as const) {
    const before = await written();
    await go(`/?lang=${lang}`);
    await page.type('#add-infohashes', v1().infohash);
    await page.type('#add-category_new', '../etc');
    await page.type('#add-category_save_path', '/etc');
    expect((await submit())!.status()).toBe(400);
    expect(await page.$('[data-error-for="category_new"]')).not.toBeNull();
    expect(await page.$('[data-error-for="category_save_path"]')).not.toBeNull();
    expect(await page.$eval('#add-category_new', (el) => (el as HTMLInputElement).value)).toBe('../etc');
    expect(await written()).toEqual(before);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, `add-category-refused-${lang}`, 390, 844);
  }
});

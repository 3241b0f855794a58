/// <reference lib="dom" />
import type { Browser, Page } from 'puppeteer-core';
import { DynamoDownloadStore } from '../../lib/downloads/dynamodb-store';
import { downloadsStore, v1 } from '../support/downloads';
import { launchBrowser, screenshot, seriousViolations, signIn } from '../support/browser';
import { call } from '../support/http';
import { httpUrl } from '../support/stack';

/**
 * The card of a completed download with a seeding goal (lib/web/download-lifecycle.ts, share-goals.ts) in real
 * Chromium against the stack, en and ru at 390 px: "seeding until ratio 2.0 / 3 days" while it seeds, then how
 * it left the client. The goal comes from POST /downloads; the steps are the store's own guarded writes, as the
 * poll makes them.
 */
jest.setTimeout(90_000);

const base = httpUrl('/').replace(/\/$/, '');
const { aws, table } = downloadsStore();
let browser: Browser;
let page: Page;
const store = () => new DynamoDownloadStore({ documents: aws.documents, table });

beforeAll(async () => {
  browser = await launchBrowser();
  page = await browser.newPage();
  await signIn(page);
});
afterAll(async () => {
  await browser?.close();
  aws.dynamodb.destroy();
});

async function seeding(name: string, action: 'remove' | 'remove_files'): Promise<string> {
  const { status, body } = await call('POST', '/downloads', {
    infohashes: [v1().infohash],
    name,
    share_ratio: 2,
    share_time_s: 3 * 86_400,
    share_action: action,
  });
  expect(status).toBe(201);
  expect(body.share).toEqual({ ratio: 2, time_s: 259_200, action });
  await store().setDownloadState(body.id, body.state, 'completed');
  await store().recordShare(body.id, { seeding: true });
  return body.id as string;
}

async function cardText(id: string, lang: 'en' | 'ru', shot: string): Promise<string> {
  await page.goto(`${base}/download/${id}?lang=${lang}`, { waitUntil: 'domcontentloaded' });
  const text = await page.$eval('[data-share]', (el) => (el as HTMLElement).innerText);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
  expect(await seriousViolations(page)).toEqual([]);
  await screenshot(page, `share-${shot}-${lang}`, 390, 844);
  return text;
}

it('shows the seeding goal, then "removed, files kept" or "removed with its files", in en and ru at 390 px', async () => {
  await page.setViewport({ width: 390, height: 844 });
  const kept = await seeding('share-card-kept', 'remove');
  const gone = await seeding('share-card-files', 'remove_files');
  const expected = {
    en: {
      seeding: 'Seeding until ratio 2.0 / 3 days.',
      kept: 'removed from the client, files kept',
      files: 'removed from the client with its files',
    },
    ru: {
      seeding: 'Раздаётся до: рейтинг 2,0 / 3 дня.',
      kept: 'удалён из клиента, файлы сохранены',
      files: 'удалён из клиента вместе с файлами',
    },
  };
  for (const lang of ['en', 'ru'] as const) expect(await cardText(kept, lang, 'seeding')).toBe(expected[lang].seeding);

  for (const [id, removal, files] of [
    [kept, 'remove', false],
    [gone, 'remove_files', true],
  ] as const) {
    await store().recordShare(id, { met: true, removal });
    await store().recordShare(id, { removed: true, files });
  }
  for (const lang of ['en', 'ru'] as const) {
    expect(await cardText(kept, lang, 'removed')).toContain(expected[lang].kept);
    expect(await cardText(gone, lang, 'removed-files')).toContain(expected[lang].files);
  }
  const dto = (await call('GET', `/downloads/${gone}`)).body;
  expect(dto).toMatchObject({ state: 'completed', share: { action: 'remove_files', removed_files: true } });
  expect(dto.share.met_at).toBeDefined();
});

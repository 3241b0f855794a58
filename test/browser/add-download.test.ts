/// <reference lib="dom" />
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, HTTPResponse, Page } from 'puppeteer-core';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { makeTorrent } from '../../tools/torrent/torrent';
import { downloadsStore, v1 } from '../support/downloads';
import { launchBrowser, screenshot, seriousViolations, signIn } from '../support/browser';
import { call, emulatorTorrents } from '../support/http';
import { httpUrl } from '../support/stack';
import { bencode } from '../support/torrent-build';

/**
 * The "Add a download" form of the list page (lib/web/add-form.ts) in real Chromium against the stack
 * (serverless offline, the session authorizer, DynamoDB Local, the qBittorrent emulator): by magnet, by a
 * .torrent chosen in the file input (made by libtorrent, tools/torrent), the existing active download's
 * card for a second add, field errors for hostile input with nothing written, the form token, 390 px.
 */
jest.setTimeout(120_000);

const base = httpUrl('/').replace(/\/$/, '');
const tag = `add-${Date.now().toString(36)}`;
const dir = path.join(process.env.TEST_STATE_DIR ?? '/tmp', `add-form-${process.pid}`);
const { aws, table } = downloadsStore();
let browser: Browser;
let page: Page;

async function go(p: string): Promise<HTTPResponse> {
  return (await page.goto(`${base}${p}`, { waitUntil: 'domcontentloaded' }))!;
}
async function submit(): Promise<HTTPResponse | null> {
  const [res] = await Promise.all([
    page.waitForNavigation({ waitUntil: 'domcontentloaded' }),
    page.click('.add-download button[type=submit]'),
  ]);
  return res;
}
const text = (selector: string) => page.$eval(selector, (el) => (el as HTMLElement).innerText);
const idOnCard = () => new URL(page.url()).pathname.split('/')[2];

/** Every item of the downloads table and every torrent in the client: what "nothing written" is checked against. */
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
  fs.mkdirSync(dir, { recursive: true });
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.setViewport({ width: 390, height: 844 });
  await signIn(page);
});
afterAll(async () => {
  await browser?.close();
  aws.dynamodb.destroy();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('adds by magnet: the new card (PRG); the same magnet again: the existing card, saying so, in en and ru', async () => {
  const hash = v1().infohash;
  const magnet = `magnet:?xt=urn:btih:${hash}&dn=${tag}-magnet`;
  await go('/?lang=en');
  await page.type('#add-magnet', magnet);
  const res = await submit();
  expect(res!.status()).toBe(200);
  expect(new URL(page.url()).pathname).toMatch(/^\/download\/[0-9a-z]{26}$/i);
  const id = idOnCard();
  expect(await text('h1')).toBe(`${tag}-magnet`);
  expect(await page.$('[data-already-active]')).toBeNull();
  const stored = await call('GET', `/downloads/${id}`);
  expect(stored.body).toMatchObject({ state: 'queued', infohashes: [{ infohash: hash, kind: 'v1' }] });
  expect((await emulatorTorrents()).filter((t) => t.hash === hash)).toHaveLength(1);

  for (const [lang, sentence] of [
    ['en', 'This torrent was already being downloaded'],
    ['ru', 'Этот торрент уже загружается'],
  ] as const) {
    const before = await written();
    await go(`/?lang=${lang}`);
    await page.type('#add-magnet', magnet);
    await submit();
    expect(new URL(page.url()).pathname).toBe(`/download/${id}`);
    expect(await text('[data-already-active]')).toContain(sentence);
    expect(await written()).toEqual(before);
  }
  // The sentence is said only by the add's redirect, and only of an active download.
  await go(`/download/${id}`);
  expect(await page.$('[data-already-active]')).toBeNull();
});

it('adds a .torrent made by libtorrent through the file input, with a name and a timeout of its own', async () => {
  const content = path.join(dir, `${tag}-file.bin`);
  fs.writeFileSync(content, randomBytes(200_000));
  const made = makeTorrent(content, 'hybrid', `${content}.torrent`);
  await go('/?lang=en');
  const input = await page.$('#add-torrent');
  await (input as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(made.torrentFile);
  await page.type('#add-name', `${tag} мой файл`);
  await page.click('.advanced summary');
  await page.type('#add-stall_timeout_s', '7200');
  const res = await submit();
  expect(res!.status()).toBe(200);
  const id = idOnCard();
  expect(await text('h1')).toBe(`${tag} мой файл`);
  const stored = (await call('GET', `/downloads/${id}`)).body;
  expect(stored.infohashes.map((h: { infohash: string }) => h.infohash).sort()).toEqual([made.v1, made.v2].sort());
  expect(stored.stall_timeout_s).toBe(7200);
  // Handed over as the file: the client knows the metadata at once, under our name.
  const inClient = (await emulatorTorrents()).find((t) => t.infohash_v2 === made.v2) as Record<string, unknown>;
  expect(inClient).toMatchObject({ has_metadata: true, name: `${tag} мой файл`, tags: id });

  // The same file again: the existing download.
  await go('/');
  await ((await page.$('#add-torrent')) as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(
    made.torrentFile,
  );
  await submit();
  expect(new URL(page.url()).pathname).toBe(`/download/${id}`);
  expect(await page.$('[data-already-active]')).not.toBeNull();
});

describe('refusals: beside the field, in the page’s language, the input kept, nothing written', () => {
  const hostileFile = path.join(dir, 'hostile.torrent');
  const cases: Array<{
    what: string;
    fill: () => Promise<void>;
    field: string;
    en: string;
    ru: string;
    kept?: [string, string];
  }> = [
    {
      what: 'an invalid magnet',
      fill: () => page.type('#add-magnet', 'magnet:?xt=urn:btih:nothex'),
      field: 'magnet',
      en: 'This is not a magnet link the service can use.',
      ru: 'Эту magnet-ссылку сервис принять не может.',
      kept: ['#add-magnet', 'magnet:?xt=urn:btih:nothex'],
    },
    {
      what: 'a bad infohash',
      fill: () => page.type('#add-infohashes', 'abc123'),
      field: 'infohashes',
      en: 'These are not valid infohashes.',
      ru: 'Это не infohash.',
      kept: ['#add-infohashes', 'abc123'],
    },
    {
      what: 'a hostile .torrent (a 200 MB string length in a small file), with a name',
      fill: async () => {
        fs.writeFileSync(
          hostileFile,
          Buffer.concat([Buffer.from('d4:info209715200:'), Buffer.alloc(2000, 97), Buffer.from('e')]),
        );
        await ((await page.$('#add-torrent')) as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(
          hostileFile,
        );
        await page.type('#add-name', `${tag} kept`);
      },
      field: 'torrent',
      en: 'This is not a .torrent file the service can use.',
      ru: 'Этот файл .torrent сервис принять не может.',
      kept: ['#add-name', `${tag} kept`],
    },
    {
      what: 'a .torrent naming ../ in its files',
      fill: async () => {
        fs.writeFileSync(
          hostileFile,
          bencode({ info: { name: '../../etc/cron.d/x', 'piece length': 16384, length: 1, pieces: Buffer.alloc(20) } }),
        );
        await ((await page.$('#add-torrent')) as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(
          hostileFile,
        );
      },
      field: 'torrent',
      en: 'This is not a .torrent file the service can use.',
      ru: 'Этот файл .torrent сервис принять не может.',
    },
    {
      what: 'nothing given',
      fill: async () => undefined,
      field: 'source',
      en: 'Give a magnet link, infohashes or a .torrent file.',
      ru: 'Укажите magnet-ссылку, infohash или файл .torrent.',
    },
    {
      what: 'two sources',
      fill: async () => {
        await page.type('#add-magnet', `magnet:?xt=urn:btih:${v1().infohash}`);
        await page.type('#add-infohashes', v1().infohash);
      },
      field: 'source',
      en: 'Give only one of them',
      ru: 'Укажите что-то одно',
    },
  ];

  it.each(cases)('$what', async ({ fill, field, en, ru, kept }) => {
    for (const [lang, sentence] of [
      ['en', en],
      ['ru', ru],
    ] as const) {
      const before = await written();
      await go(`/?lang=${lang}`);
      await fill();
      const res = await submit();
      expect(res!.status()).toBe(400);
      expect(new URL(page.url()).pathname).toBe('/download');
      expect(await text(`[data-error-for="${field}"]`)).toContain(sentence);
      expect(await page.$$('[data-error-for]')).toHaveLength(1);
      if (kept) expect(await page.$eval(kept[0], (el) => (el as HTMLInputElement).value)).toBe(kept[1]);
      if (field === 'torrent') expect(await text('[data-file-again]')).toContain(path.basename(hostileFile));
      expect(await written()).toEqual(before);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    }
  });

  it('the refused form is usable at 390 px: no overflow, no serious axe violation (screenshots in ru)', async () => {
    await go('/?lang=ru');
    await page.type('#add-magnet', `magnet:?xt=urn:btih:${v1().infohash}`);
    await page.type('#add-name', 'имя');
    await submit();
    expect(await text('[data-error-for="name"]')).toContain('У magnet-ссылки своё имя');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'add-refused-ru', 390, 844);
  });
});

it('a post without the form token is refused (403) and writes nothing', async () => {
  await go('/?lang=en');
  await page.type('#add-magnet', `magnet:?xt=urn:btih:${v1().infohash}&dn=${tag}-forged`);
  await page.$eval('.add-download input[name=csrf]', (el) => el.remove());
  const before = await written();
  const res = await submit();
  expect(res!.status()).toBe(403);
  expect(await written()).toEqual(before);
  expect((await call('GET', `/downloads?q=${tag}-forged`)).body.items).toEqual([]);
});

it('the list page with the form at 390 px in en and ru: no overflow, no serious axe violation', async () => {
  for (const lang of ['en', 'ru'] as const) {
    await go(`/?lang=${lang}`);
    await page.click('.advanced summary');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBe(390);
    // Every field of the form fits the width (nothing is cut off at the right).
    const widest = await page.$$eval('.add-download input, .add-download textarea, .add-download button', (els) =>
      Math.max(...els.map((e) => e.getBoundingClientRect().right)),
    );
    expect(widest).toBeLessThanOrEqual(390);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, `add-form-${lang}`, 390, 844);
  }
});

/// <reference lib="dom" />
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { QbtSession, RunningQbittorrent, startQbittorrent } from '../../tools/stack/qbittorrent';
import { clientIdOf, MadeTorrent, magnetOf, makeTorrent, TorrentKind } from '../../tools/torrent/torrent';
import { launchBrowser, signIn } from '../support/browser';
import { call } from '../support/http';
import { httpUrl, invokeScheduled } from '../support/stack';
import { waitFor } from '../support/telegram';

/**
 * The README's first download, through the web form, against a REAL qbittorrent-nox in the closed loopback
 * swarm of test/e2e/real-qbittorrent.test.ts (a client and a seeder of ours on `lo`, DHT/LSD/PeX off; the
 * stack's emulator passes the service's calls through to the client): the seeder's magnet pasted into
 * "Magnet link", and a .torrent of each kind chosen in the file input (libtorrent's, tools/torrent), each downloaded to
 * completion, the card saying so. The poll is driven by the test, one invocation at a time.
 */
jest.setTimeout(600_000);

const base = httpUrl('/').replace(/\/$/, '');
const dir = path.join(process.env.TEST_STATE_DIR ?? '/tmp', `add-real-qbt-${process.pid}`);
const emulatorUrl = process.env.TORRENT_CLIENT_URL!;
let client: RunningQbittorrent;
let seeder: RunningQbittorrent;
let peer: string;
let browser: Browser;
let page: Page;

async function upstream(method: 'PUT' | 'DELETE', body?: unknown) {
  const res = await fetch(`${emulatorUrl}/emulator/upstream`, {
    method,
    body: body ? JSON.stringify(body) : undefined,
  });
  if (res.status !== 200) throw new Error(`emulator upstream: ${res.status} ${await res.text()}`);
}

beforeAll(async () => {
  fs.mkdirSync(path.join(dir, 'files'), { recursive: true });
  [client, seeder] = await Promise.all([
    startQbittorrent({ name: 'qbt-client', profileDir: path.join(dir, 'client'), logDir: dir, keepTorrents: false }),
    startQbittorrent({ name: 'qbt-seeder', profileDir: path.join(dir, 'seeder'), logDir: dir }),
  ]);
  peer = `127.0.0.1:${seeder.torrentPort}`;
  await upstream('PUT', { url: client.url, username: client.username, password: client.password });
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.setViewport({ width: 390, height: 844 });
  await signIn(page);
});

afterAll(async () => {
  await browser?.close();
  await upstream('DELETE').catch(() => undefined);
  await Promise.all([client?.stop(), seeder?.stop()]);
});

async function seeded(kind: TorrentKind): Promise<MadeTorrent> {
  const file = path.join(dir, 'files', `web-${kind}-${randomBytes(4).toString('hex')}.bin`);
  fs.writeFileSync(file, randomBytes(2_000_000));
  const made = makeTorrent(file, kind, `${file}.torrent`);
  await QbtSession.of(seeder).seed(made.torrentFile, path.dirname(file), clientIdOf(made));
  return made;
}

async function pollUntilCompleted(id: string) {
  return waitFor(
    `download ${id} to be completed`,
    async () => {
      const out = await invokeScheduled('downloadsPoll');
      if (out.FunctionError) throw new Error(`downloadsPoll failed: ${new TextDecoder().decode(out.Payload)}`);
      const { body } = await call('GET', `/downloads/${id}`);
      return body.state === 'completed' && body;
    },
    180_000,
  );
}

async function submitForm(): Promise<string> {
  await Promise.all([
    page.waitForNavigation({ waitUntil: 'domcontentloaded' }),
    page.click('.add-download button[type=submit]'),
  ]);
  const [, where, id] = new URL(page.url()).pathname.split('/');
  expect(where).toBe('download');
  return id;
}

const sha256Of = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

async function cardSaysCompleted(id: string) {
  await page.goto(`${base}/download/${id}?lang=en`, { waitUntil: 'domcontentloaded' });
  expect(await page.$eval('.facts .state', (el) => el.textContent)).toBe('Completed');
}

it('the seeder’s magnet pasted into the form downloads to completion (the README walk-through)', async () => {
  const made = await seeded('hybrid');
  await page.goto(`${base}/?lang=en`, { waitUntil: 'domcontentloaded' });
  await page.type('#add-magnet', magnetOf(made, { peers: [peer] }));
  const id = await submitForm();
  expect(await page.$eval('h1', (el) => el.textContent)).toBe(made.name);
  await pollUntilCompleted(id);
  expect(sha256Of(path.join(client.downloadDir, made.name))).toBe(sha256Of(made.file));
  await cardSaysCompleted(id);
});

it.each(['v1', 'v2', 'hybrid'] as const)(
  'a %s .torrent chosen in the file input downloads to completion (the seeder given as its peer)',
  async (kind) => {
    const made = await seeded(kind);
    await page.goto(`${base}/?lang=en`, { waitUntil: 'domcontentloaded' });
    await ((await page.$('#add-torrent')) as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(
      made.torrentFile,
    );
    const id = await submitForm();
    // Handed over as the file: the client has the metadata at once, under its v2 id, in our category.
    const [t] = await waitFor(
      'the torrent in the real client',
      async () => {
        const found = await QbtSession.of(client).torrents(`?hashes=${clientIdOf(made)}`);
        return found.length > 0 && found;
      },
      60_000,
    );
    expect(t).toMatchObject({
      infohash_v1: made.v1 ?? '',
      infohash_v2: made.v2 ?? '',
      tags: id,
      category: 'torrent-scan-sync',
    });
    expect(t.state).not.toBe('metaDL');
    // A .torrent names no peer of the closed swarm (no tracker, DHT off): we give it the seeder.
    await QbtSession.of(client).addPeers([clientIdOf(made)], [peer]);
    await pollUntilCompleted(id);
    expect(sha256Of(path.join(client.downloadDir, made.name))).toBe(sha256Of(made.file));
    await cardSaysCompleted(id);
  },
);

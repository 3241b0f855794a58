import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { QbtSession, RunningQbittorrent, startQbittorrent } from '../../tools/stack/qbittorrent';
import { clientIdOf, MadeTorrent, magnetOf, makeTorrent } from '../../tools/torrent/torrent';
import { call } from '../support/http';
import { invokeScheduled } from '../support/stack';
import { waitFor } from '../support/telegram';

/**
 * Categories (decisions 458, 459, 371) against a REAL qBittorrent (Debian's qbittorrent-nox 4.5.2) in the
 * closed loopback swarm of test/e2e/real-qbittorrent.test.ts: a download in a new sub-category is saved in the
 * category's folder under the client's download folder and completed by the poll; the real client's own
 * `torrents/info?category=` leaves sub-categories out (they are off by default), which is why the tree is
 * filtered by us; a torrent in another category is never adopted.
 */
jest.setTimeout(600_000);

const ROOT = 'torrent-scan-sync';
const dir = path.join(process.env.TEST_STATE_DIR ?? '/tmp', `real-qbt-cat-${process.pid}`);
let client: RunningQbittorrent;
let seeder: RunningQbittorrent;
let peer: string;
const emulatorUrl = process.env.TORRENT_CLIENT_URL!;

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
    startQbittorrent({ name: 'qbt-cat-client', profileDir: path.join(dir, 'client'), logDir: dir }),
    startQbittorrent({ name: 'qbt-cat-seeder', profileDir: path.join(dir, 'seeder'), logDir: dir }),
  ]);
  peer = `127.0.0.1:${seeder.torrentPort}`;
  await upstream('PUT', { url: client.url, username: client.username, password: client.password });
});

afterAll(async () => {
  await upstream('DELETE').catch(() => undefined);
  await Promise.all([client?.stop(), seeder?.stop()]);
});

async function seeded(bytes = 2_000_000): Promise<MadeTorrent> {
  const file = path.join(dir, 'files', `cat-${randomBytes(4).toString('hex')}.bin`);
  fs.writeFileSync(file, randomBytes(bytes));
  const made = makeTorrent(file, 'v1', `${file}.torrent`);
  await QbtSession.of(seeder).seed(made.torrentFile, path.dirname(file), clientIdOf(made));
  return made;
}

async function poll(): Promise<void> {
  const out = await invokeScheduled('downloadsPoll');
  if (out.FunctionError) throw new Error(`downloadsPoll failed: ${new TextDecoder().decode(out.Payload)}`);
}

const sha256Of = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

it('a download in a new sub-category: its folder under the download folder, the real client agreeing, completed', async () => {
  const made = await seeded();
  const category = `${ROOT}/films`;
  const created = await call('POST', '/downloads', {
    magnet: magnetOf(made, { peers: [peer] }),
    category,
    category_save_path: 'Films/New',
  });
  expect(created.status).toBe(201);
  expect(created.body.category).toBe(category);
  const id = created.body.id as string;

  const done = await waitFor(
    `download ${id} to be completed`,
    async () => {
      await poll();
      const { body } = await call('GET', `/downloads/${id}`);
      return body.state === 'completed' && body;
    },
    180_000,
  );
  expect(done).toMatchObject({ category, progress: 1 });
  const qbt = QbtSession.of(client);
  const [t] = await qbt.torrents(`?hashes=${clientIdOf(made)}`);
  expect({ category: t.category, auto_tmm: t.auto_tmm, tags: t.tags }).toEqual({ category, auto_tmm: true, tags: id });
  expect(String(t.save_path).replace(/\/$/, '')).toBe(path.join(client.downloadDir, 'Films', 'New'));
  expect(sha256Of(path.join(client.downloadDir, 'Films', 'New', made.name))).toBe(sha256Of(made.file));

  // The real client's answers the emulator models: the category list, a second create, the category filter.
  const categories = (await (await qbt.call('GET', 'torrents/categories')).json()) as Record<
    string,
    Record<string, unknown>
  >;
  expect(categories[category]).toMatchObject({ name: category, savePath: 'Films/New' });
  // A second create: 409 "Unable to create category" (QbtSession throws on any answer that is not ok).
  await expect(
    qbt.call('POST', 'torrents/createCategory', new URLSearchParams({ category, savePath: 'Films/New' })),
  ).rejects.toThrow(/answered 409: Unable to create category/);
  const filtered = await qbt.torrents(`?category=${encodeURIComponent(ROOT)}`);
  expect(filtered.map((x) => x.hash)).not.toContain(clientIdOf(made));
});

it('a torrent another tool put in another category of the real client is never adopted', async () => {
  const made = await seeded();
  const qbt = QbtSession.of(client);
  const form = new FormData();
  form.set('urls', magnetOf(made, { peers: [peer] }));
  form.set('category', 'sonarr');
  expect((await qbt.call('POST', 'torrents/add', form)).status).toBe(200);
  await waitFor(
    'the torrent in the client',
    async () => (await qbt.torrents(`?hashes=${clientIdOf(made)}`)).length > 0,
    60_000,
  );
  await poll();
  await poll();
  expect((await call('GET', `/downloads?q=${made.v1}`)).body.items).toEqual([]);
});

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DynamoDownloadStore } from '../../../lib/downloads/dynamodb-store';
import { reconcile } from '../../../lib/downloads/reconcile';
import { ingest } from '../../../lib/downloads/service';
import type { ShareSettings } from '../../../lib/downloads/share-goals';
import { silentLogger } from '../../../lib/log';
import { DEFAULT_CATEGORY, QBittorrentClient } from '../../../lib/torrents/qbittorrent';
import { QbtSession, RunningQbittorrent, startQbittorrent } from '../../../tools/stack/qbittorrent';
import { clientIdOf, MadeTorrent, magnetOf, makeTorrent } from '../../../tools/torrent/torrent';
import { isolatedTable, stackClients } from '../../support/stack';
import { waitFor } from '../../support/telegram';

/**
 * Seeding goals (lib/downloads/share-goals.ts) against a REAL qbittorrent-nox (4.5.2) in the closed loopback
 * swarm (a client and a seeder of ours, DHT, LSD and PeX off: tools/stack/qbittorrent.ts): the goal handed to
 * the client on add is the one it reports; a goal of ratio 0 removes the torrent WITH its files, one minute of
 * seeding (the poll's clock moved, the client's seeding_time of an idle seed frozen) removes it keeping them;
 * a torrent a person added in another category is never touched, even when the poll adopts every category.
 */
jest.setTimeout(300_000);

const aws = stackClients();
const dir = path.join(process.env.TEST_STATE_DIR ?? '/tmp', `share-qbt-${process.pid}`);
let table: { name: string; drop: () => Promise<void> };
let client: RunningQbittorrent;
let seeder: RunningQbittorrent;
let peer: string;
let offset = 0;
const now = () => Date.now() + offset;

beforeAll(async () => {
  fs.mkdirSync(path.join(dir, 'files'), { recursive: true });
  [table, client, seeder] = await Promise.all([
    isolatedTable(aws, 'DownloadsTable'),
    startQbittorrent({ name: 'qbt-share-client', profileDir: path.join(dir, 'client'), logDir: dir }),
    startQbittorrent({ name: 'qbt-share-seeder', profileDir: path.join(dir, 'seeder'), logDir: dir }),
  ]);
  peer = `127.0.0.1:${seeder.torrentPort}`;
});
afterAll(async () => {
  await Promise.all([client?.stop(), seeder?.stop()]);
  await table?.drop();
  aws.dynamodb.destroy();
});

const NONE: ShareSettings = { ratio: null, timeS: 0, action: 'keep' };
// A new store and client per poll: each poll is a service that just started.
const deps = (o: { share?: ShareSettings; allCategories?: boolean } = {}) => ({
  store: new DynamoDownloadStore({ documents: aws.documents, table: table.name }),
  torrents: new QBittorrentClient({
    baseUrl: client.url,
    auth: { kind: 'password' as const, username: client.username, password: client.password },
    timeoutMs: 10_000,
    fullResyncMs: 0,
    allCategories: o.allCategories,
  }),
  log: silentLogger,
  magnets: { allowPrivateAddresses: true },
  disk: { reserveBytes: null },
  share: o.share ?? NONE,
  now,
});

async function seeded(): Promise<MadeTorrent> {
  const file = path.join(dir, 'files', `v1-${randomBytes(4).toString('hex')}.bin`);
  fs.writeFileSync(file, randomBytes(1_000_000));
  const made = makeTorrent(file, 'v1', `${file}.torrent`);
  await QbtSession.of(seeder).seed(made.torrentFile, path.dirname(file), clientIdOf(made));
  return made;
}
const inClient = async (id: string) => (await QbtSession.of(client).torrents(`?hashes=${id}`))[0];
const store = () => deps().store;

async function pollUntil(what: string, done: () => Promise<unknown>, o: Parameters<typeof deps>[0] = {}) {
  await waitFor(
    what,
    async () => {
      await reconcile(deps(o));
      return done();
    },
    120_000,
  );
}

it('a goal of ratio 0 removes the torrent with its files as soon as it completes', async () => {
  const made = await seeded();
  const id = clientIdOf(made);
  const { download } = await ingest(deps(), {
    magnet: magnetOf(made, { peers: [peer] }),
    share_ratio: 0,
    share_action: 'remove_files',
  });
  await waitFor('the torrent in the client', async () => (await inClient(id)) !== undefined, 30_000);
  // The goal as qBittorrent took it from the add.
  expect(await inClient(id)).toMatchObject({ ratio_limit: 0, category: DEFAULT_CATEGORY });
  const content = path.join(client.downloadDir, made.name);
  await waitFor('the download complete in the client', async () => (await inClient(id))?.progress === 1, 120_000);
  expect(fs.existsSync(content)).toBe(true);
  await pollUntil('the removal recorded', async () => (await store().get(download.id))?.removed_at);
  expect(await store().get(download.id)).toMatchObject({ state: 'completed', removed_files: true });
  await waitFor('the torrent gone from the client', async () => (await inClient(id)) === undefined, 30_000);
  await waitFor('its files deleted', async () => !fs.existsSync(content), 30_000);
});

it('one minute of seeding (the poll clock) removes the torrent and keeps its files', async () => {
  const made = await seeded();
  const id = clientIdOf(made);
  const { download } = await ingest(deps(), {
    magnet: magnetOf(made, { peers: [peer] }),
    share_time_s: 60,
    share_action: 'remove',
  });
  await waitFor('the torrent in the client', async () => (await inClient(id)) !== undefined, 30_000);
  expect(await inClient(id)).toMatchObject({ seeding_time_limit: 1 });
  await pollUntil('the seeding clock started', async () => (await store().get(download.id))?.seeding_since);
  expect((await store().get(download.id))!.removed_at).toBeUndefined();
  // setShareLimits (4.5.2 takes the 4.6+ field too) left the limit as it was asked.
  expect(await inClient(id)).toMatchObject({ seeding_time_limit: 1 });
  offset = 61_000;
  try {
    await pollUntil('the removal recorded', async () => (await store().get(download.id))?.removed_at);
  } finally {
    offset = 0;
  }
  expect(await store().get(download.id)).toMatchObject({ removed_files: false });
  await waitFor('the torrent gone from the client', async () => (await inClient(id)) === undefined, 30_000);
  expect(fs.existsSync(path.join(client.downloadDir, made.name))).toBe(true);
});

it('a torrent added by hand in another category is untouched, even adopted under a default that removes', async () => {
  const made = await seeded();
  const id = clientIdOf(made);
  await QbtSession.of(client).call(
    'POST',
    'torrents/add',
    new URLSearchParams({ urls: magnetOf(made, { peers: [peer] }), category: 'by-hand' }),
  );
  await waitFor('the hand-added torrent complete', async () => (await inClient(id))?.progress === 1, 120_000);
  const removing = { share: { ratio: 0, timeS: 0, action: 'remove_files' as const }, allCategories: true };
  await pollUntil(
    'its adopted download recorded as not ours to remove',
    async () => (await store().historyOfInfohash(made.v1!))[0]?.removed_at,
    removing,
  );
  expect((await store().historyOfInfohash(made.v1!))[0]).toMatchObject({ removed_files: false });
  expect(await inClient(id)).toMatchObject({ category: 'by-hand', progress: 1 });
  expect(fs.existsSync(path.join(client.downloadDir, made.name))).toBe(true);
});

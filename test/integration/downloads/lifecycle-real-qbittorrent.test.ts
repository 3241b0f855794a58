import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DynamoDownloadStore } from '../../../lib/downloads/dynamodb-store';
import { reconcile } from '../../../lib/downloads/reconcile';
import { ingest, keepWaiting } from '../../../lib/downloads/service';
import { silentLogger } from '../../../lib/log';
import { QBittorrentClient } from '../../../lib/torrents/qbittorrent';
import { QbtSession, RunningQbittorrent, startQbittorrent } from '../../../tools/stack/qbittorrent';
import { clientIdOf, magnetOf, makeTorrent } from '../../../tools/torrent/torrent';
import { assertOneActivePerHash } from '../../support/downloads';
import { isolatedTable, stackClients } from '../../support/stack';
import { waitFor } from '../../support/telegram';

/**
 * The timeouts (lib/downloads/lifecycle.ts) against a REAL qbittorrent-nox (4.5.2) bound to loopback with
 * DHT, LSD and PeX off (tools/stack/qbittorrent.ts): a magnet of a random hash has no peer anywhere, so its
 * metadata never arrives; a second one seeds a file at a crawl, and is stopped halfway for the stall. The poll
 * and the store are ours with one injected clock (the timeouts shortened by moving it), DynamoDB Local in a
 * private table.
 */
jest.setTimeout(180_000);

const aws = stackClients();
const dir = path.join(process.env.TEST_STATE_DIR ?? '/tmp', `lifecycle-qbt-${process.pid}`);
let table: { name: string; drop: () => Promise<void> };
let qbt: RunningQbittorrent;
let seeder: RunningQbittorrent;
let time = Date.now();
const now = () => time;
const start = (ports?: { webuiPort: number; torrentPort: number; password: string }) =>
  startQbittorrent({
    name: 'qbt-lifecycle',
    profileDir: path.join(dir, 'client'),
    logDir: dir,
    keepTorrents: !!ports,
    ...ports,
  });

beforeAll(async () => {
  fs.mkdirSync(dir, { recursive: true });
  [table, qbt, seeder] = await Promise.all([
    isolatedTable(aws, 'DownloadsTable'),
    start(),
    startQbittorrent({ name: 'qbt-lifecycle-seeder', profileDir: path.join(dir, 'seeder'), logDir: dir }),
  ]);
});
afterAll(async () => {
  await Promise.all([qbt?.stop(), seeder?.stop()]);
  await table?.drop();
  aws.dynamodb.destroy();
});

// A new store and client per call: each poll is a service that just started (nothing kept in memory).
const deps = () => ({
  store: new DynamoDownloadStore({ documents: aws.documents, table: table.name, now }),
  torrents: new QBittorrentClient({
    baseUrl: qbt.url,
    auth: { kind: 'password', username: qbt.username, password: qbt.password },
    timeoutMs: 5000,
    fullResyncMs: 0,
    now,
  }),
  log: silentLogger,
  now,
  lifecycle: { metadataTimeoutS: 60, stallTimeoutS: 600, graceS: 30 },
});
const inClient = async (hash: string) => (await QbtSession.of(qbt).torrents(`?hashes=${hash}`)).map((t) => t.state);

it('a magnet with no peer warns, ends failed/no_metadata, leaves the client, and the same magnet is added again at once; a restart of both keeps the clock', async () => {
  const hash = randomBytes(20).toString('hex');
  const magnet = `magnet:?xt=urn:btih:${hash}&dn=nobody-has-it`;
  const { download } = await ingest(deps(), { magnet });
  await waitFor('the real client to look for metadata', async () => (await inClient(hash))[0] === 'metaDL', 30_000);
  await reconcile(deps());
  const clock = (await deps().store.get(download.id))!.progress_at;
  expect(clock).toBeDefined();

  // qbittorrent-nox restarts halfway (and so does the service: a new client and store each poll).
  time += 30_000;
  const ports = { webuiPort: Number(new URL(qbt.url).port), torrentPort: qbt.torrentPort, password: qbt.password };
  await qbt.stop();
  qbt = await start(ports);
  await waitFor('the torrent back after the restart', async () => (await inClient(hash))[0] === 'metaDL', 60_000);
  await reconcile(deps());
  expect((await deps().store.get(download.id))?.progress_at).toBe(clock);

  time += 30_000;
  expect((await reconcile(deps())).warned).toBe(1);
  expect(await deps().store.get(download.id)).toMatchObject({ state: 'downloading', warning: 'no_metadata' });
  time += 30_000;
  expect((await reconcile(deps())).timed_out).toBe(1);
  expect(await deps().store.get(download.id)).toMatchObject({ state: 'failed', failure_reason: 'no_metadata' });
  await waitFor('the dead torrent removed from the client', async () => (await inClient(hash)).length === 0, 30_000);

  const again = await ingest(deps(), { magnet });
  expect(again.created).toBe(true);
  await waitFor('the magnet in the client again', async () => (await inClient(hash))[0] === 'metaDL', 30_000);
  await assertOneActivePerHash(aws, table.name, [hash]);
});

it('a transfer whose seeder stops halfway warns `stalled`; "keep waiting" pressed twice at once restarts the clock once; then it ends failed/stalled', async () => {
  // 4 MB sent at 64 KiB/s: about a minute in all, so it is surely caught halfway.
  const file = path.join(dir, `stall-${randomBytes(4).toString('hex')}.bin`);
  fs.writeFileSync(file, randomBytes(4_000_000));
  const made = makeTorrent(file, 'v1', `${file}.torrent`);
  const id = clientIdOf(made);
  await QbtSession.of(seeder).seed(made.torrentFile, dir, id);
  await QbtSession.of(seeder).call(
    'POST',
    'torrents/setUploadLimit',
    new URLSearchParams({ hashes: id, limit: '65536' }),
  );
  const { download } = await ingest(deps(), { magnet: magnetOf(made) });
  // The seeder is on loopback, which a magnet's x.pe may not name (decision 383): the test gives the peer.
  await waitFor('the torrent in the client', async () => (await inClient(id)).length > 0, 30_000);
  await QbtSession.of(qbt).addPeers([id], [`127.0.0.1:${seeder.torrentPort}`]);
  const progress = async () => Number((await QbtSession.of(qbt).torrents(`?hashes=${id}`))[0]?.progress ?? 0);
  await waitFor('the transfer under way', async () => (await progress()) > 0.1, 60_000);
  await reconcile(deps());
  // The seeder goes away halfway: the client has the metadata and part of the bytes, and nobody to get more from.
  await QbtSession.of(seeder).call('POST', 'torrents/pause', new URLSearchParams({ hashes: id }));
  // No byte arrives any more. qBittorrent says `stalledDL` only once its averaged speed has decayed to 0 (about
  // 40 s on 4.5.2); until then it says `downloading`: both are the transfer phase, judged by the same clock.
  for (let last = -1, now = await progress(); now !== last; last = now, now = await progress())
    await new Promise((r) => setTimeout(r, 2000));
  expect(['downloading', 'stalledDL']).toContain((await inClient(id))[0]);
  expect(await progress()).toBeLessThan(1);
  await reconcile(deps()); // the last bytes that arrived before the stop move the clock to now
  const clock = (await deps().store.get(download.id))!.progress_at;

  time += 600_000;
  // Judged by this download's own row: the first test's magnet, added again, is in the same client and table.
  await reconcile(deps());
  expect(await deps().store.get(download.id)).toMatchObject({ state: 'downloading', warning: 'stalled' });

  // Two presses at once: one clears the warning and restarts the clock, the other finds no warning.
  time += 10_000;
  const warned = (await deps().store.get(download.id))!;
  await Promise.all([keepWaiting(deps(), download.id), keepWaiting(deps(), download.id)]);
  const kept = (await deps().store.get(download.id))!;
  expect(kept.revision).toBe(warned.revision + 1);
  expect(kept.warning).toBeUndefined();
  expect(Date.parse(kept.progress_at!)).toBe(time);
  expect(kept.progress_at).not.toBe(clock);
  await reconcile(deps()); // the clock was restarted: not stalled for long yet
  expect((await deps().store.get(download.id))!.warning).toBeUndefined();

  time += 600_000;
  await reconcile(deps());
  expect((await deps().store.get(download.id))!.warning).toBe('stalled');
  time += 30_000;
  await reconcile(deps());
  expect(await deps().store.get(download.id)).toMatchObject({ state: 'failed', failure_reason: 'stalled' });
  await assertOneActivePerHash(aws, table.name, [made.v1!]);
});

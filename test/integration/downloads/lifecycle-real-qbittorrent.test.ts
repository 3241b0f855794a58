import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DynamoDownloadStore } from '../../../lib/downloads/dynamodb-store';
import { reconcile } from '../../../lib/downloads/reconcile';
import { ingest } from '../../../lib/downloads/service';
import { silentLogger } from '../../../lib/log';
import { QBittorrentClient } from '../../../lib/torrents/qbittorrent';
import { QbtSession, RunningQbittorrent, startQbittorrent } from '../../../tools/stack/qbittorrent';
import { assertOneActivePerHash } from '../../support/downloads';
import { isolatedTable, stackClients } from '../../support/stack';
import { waitFor } from '../../support/telegram';

/**
 * The timeouts (lib/downloads/lifecycle.ts) against a REAL qbittorrent-nox (4.5.2) bound to loopback with
 * DHT, LSD and PeX off (tools/stack/qbittorrent.ts): a magnet of a random hash has no peer anywhere, so its
 * metadata never arrives. The poll and the store are ours with one injected clock (the timeouts shortened
 * by moving it), DynamoDB Local in a private table.
 */
jest.setTimeout(180_000);

const aws = stackClients();
const dir = path.join(process.env.TEST_STATE_DIR ?? '/tmp', `lifecycle-qbt-${process.pid}`);
let table: { name: string; drop: () => Promise<void> };
let qbt: RunningQbittorrent;
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
  [table, qbt] = await Promise.all([isolatedTable(aws, 'DownloadsTable'), start()]);
});
afterAll(async () => {
  await qbt?.stop();
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

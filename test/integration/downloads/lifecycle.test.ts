import { DynamoDownloadStore } from '../../../lib/downloads/dynamodb-store';
import { reconcile } from '../../../lib/downloads/reconcile';
import { ActiveExistsError } from '../../../lib/downloads/errors';
import { changeState, ingest, keepWaiting, retry } from '../../../lib/downloads/service';
import { silentLogger } from '../../../lib/log';
import { DEFAULT_CATEGORY, QBittorrentClient } from '../../../lib/torrents/qbittorrent';
import { QbittorrentEmulator } from '../../../emulator/qbittorrent/emulator';
import { assertOneActivePerHash, v1 } from '../../support/downloads';
import { isolatedTable, stackClients } from '../../support/stack';

/**
 * Downloads that do not move end (lib/downloads/lifecycle.ts), through the poll against the HTTP emulator
 * and DynamoDB Local, with ONE injected clock for the store and the poll. A private table: the poll reads
 * every active download. Every poll is a full update (fullResyncMs 0): the timeouts run on those.
 */
const aws = stackClients();
let table: { name: string; drop: () => Promise<void> };
// From the real now: the emulator stamps added_on with the real clock, and only what is added after an end revives it.
let time = Date.now();
const now = () => time;
const store = () => new DynamoDownloadStore({ documents: aws.documents, table: table.name, now });
beforeAll(async () => {
  table = await isolatedTable(aws, 'DownloadsTable');
});
afterAll(async () => {
  await table.drop();
  aws.dynamodb.destroy();
});

const LIFECYCLE = { metadataTimeoutS: 60, stallTimeoutS: 600, graceS: 30 };
let emulator: QbittorrentEmulator;
let url: string;
const client = () =>
  new QBittorrentClient({
    baseUrl: url,
    auth: { kind: 'password', username: 'admin', password: 'pw' },
    timeoutMs: 1000,
    fullResyncMs: 0,
  });
// A new store and client per call of `deps(true)`: the service restarted (nothing kept in memory).
let shared: { store: DynamoDownloadStore; torrents: QBittorrentClient };
const deps = (restart = false) => {
  if (restart || !shared) shared = { store: store(), torrents: client() };
  return { ...shared, log: silentLogger, now, lifecycle: LIFECYCLE };
};

beforeEach(async () => {
  emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile: '5.1' });
  url = await emulator.listen();
  deps(true);
});
afterEach(() => emulator.close());

const advance = (s: number) => {
  time += s * 1000;
};

it('a magnet with no metadata warns at the timeout, fails no_metadata after the grace, and the same magnet is added again at once', async () => {
  const h = v1();
  const magnet = `magnet:?xt=urn:btih:${h.infohash}&dn=dead`;
  const { download } = await ingest(deps(), { magnet });
  expect(emulator.torrents.get(h.infohash)?.state).toBe('metaDL');
  await reconcile(deps());
  advance(59);
  expect((await reconcile(deps())).warned).toBe(0);
  advance(1);
  expect((await reconcile(deps())).warned).toBe(1);
  const warned = (await deps().store.get(download.id))!;
  expect(warned).toMatchObject({
    state: 'downloading',
    warning: 'no_metadata',
    warned_at: new Date(time).toISOString(),
  });
  advance(29);
  expect((await reconcile(deps())).timed_out).toBe(0);
  advance(1);
  expect((await reconcile(deps())).timed_out).toBe(1);
  expect(await deps().store.get(download.id)).toMatchObject({ state: 'failed', failure_reason: 'no_metadata' });
  expect(await deps().store.get(download.id)).not.toHaveProperty('warning');
  // Its dead torrent is removed from the client; the guard is free: the same magnet is a new download.
  expect(emulator.torrents.has(h.infohash)).toBe(false);
  const again = await ingest(deps(), { magnet });
  expect(again.created).toBe(true);
  expect(again.download.id).not.toBe(download.id);
  await assertOneActivePerHash(aws, table.name, [h.infohash]);
  // Retry works as today: refused while another download holds the hash, and once that one is gone it comes back.
  await expect(retry(deps(), download.id)).rejects.toBeInstanceOf(ActiveExistsError);
  await changeState(deps(), again.download.id, 'cancelled');
  const retried = await retry(deps(), download.id);
  expect(retried).toMatchObject({ state: 'queued', progress_at: new Date(time).toISOString() });
  expect(retried).not.toHaveProperty('failure_reason');
});

it('a lingering dead torrent (its removal failed) never resurrects the timed-out download', async () => {
  const t = emulator.addTorrent({ kind: 'v1', state: 'metaDL', category: DEFAULT_CATEGORY });
  const { download } = await ingest(deps(), { infohashes: [t.infohash_v1!] });
  await reconcile(deps());
  advance(60);
  await reconcile(deps());
  advance(30);
  // The client refuses the removal: the torrent stays.
  const torrents = deps().torrents;
  jest.spyOn(torrents, 'remove').mockRejectedValueOnce(new Error('client down'));
  expect((await reconcile(deps())).timed_out).toBe(1);
  expect(emulator.torrents.has(t.hash)).toBe(true);
  emulator.update(t.hash, { progress: 0 }); // any change: the torrent is in the next delta
  const report = await reconcile(deps());
  expect(report.resurrected).toBe(0);
  expect(report.adopted).toBe(0);
  expect((await deps().store.get(download.id))?.state).toBe('failed');
});

it('keep waiting pressed twice at once restarts the clock once; the download then has its whole timeout again', async () => {
  const t = emulator.addTorrent({ kind: 'v1', state: 'stalledDL', progress: 0.3, category: DEFAULT_CATEGORY });
  const { download } = await ingest(deps(), { infohashes: [t.infohash_v1!] });
  await reconcile(deps());
  advance(600);
  expect((await reconcile(deps())).warned).toBe(1);
  const warned = (await deps().store.get(download.id))!;
  advance(10);
  // Two presses from two containers at once.
  const [a, b] = await Promise.all([keepWaiting(deps(true), download.id), keepWaiting(deps(true), download.id)]);
  const after = (await deps().store.get(download.id))!;
  expect(after.revision).toBe(warned.revision + 1);
  expect([a.revision, b.revision]).toEqual([after.revision, after.revision]);
  expect(after).toMatchObject({ state: 'downloading', progress_at: new Date(time).toISOString() });
  expect(after).not.toHaveProperty('warning');
  // A third press later writes nothing.
  advance(5);
  expect((await keepWaiting(deps(), download.id)).revision).toBe(after.revision);
  // Past the old grace nothing fails; the new clock warns again only after the whole timeout.
  advance(100);
  expect(await reconcile(deps())).toMatchObject({ warned: 0, timed_out: 0 });
  advance(600 - 105);
  expect((await reconcile(deps())).warned).toBe(1);
});

it('keep waiting racing the fail: one wins, never both (the download is failed without a warning or downloading with a fresh clock)', async () => {
  for (let round = 0; round < 4; round++) {
    const t = emulator.addTorrent({ kind: 'v1', state: 'metaDL', category: DEFAULT_CATEGORY });
    const { download } = await ingest(deps(), { infohashes: [t.infohash_v1!] });
    await reconcile(deps());
    advance(60);
    await reconcile(deps());
    advance(30);
    const [polled, kept] = await Promise.allSettled([reconcile(deps(true)), keepWaiting(deps(true), download.id)]);
    expect(polled.status).toBe('fulfilled');
    const final = (await deps().store.get(download.id))!;
    if (final.state === 'failed') {
      expect(final.failure_reason).toBe('no_metadata');
      expect(kept.status).toBe('rejected');
    } else {
      expect(final).toMatchObject({ state: 'downloading', progress_at: new Date(time).toISOString() });
      expect(final).not.toHaveProperty('warning');
      expect(final).not.toHaveProperty('failure_reason');
    }
    await assertOneActivePerHash(aws, table.name, [t.infohash_v1!]);
  }
});

it('progress restarts the clock and clears a warning; a paused or checking torrent never counts', async () => {
  const t = emulator.addTorrent({ kind: 'v1', state: 'downloading', progress: 0.1, category: DEFAULT_CATEGORY });
  const { download } = await ingest(deps(), { infohashes: [t.infohash_v1!] });
  await reconcile(deps());
  advance(600);
  expect((await reconcile(deps())).warned).toBe(1);
  advance(5);
  emulator.update(t.hash, { progress: 0.2 });
  await reconcile(deps());
  const moved = (await deps().store.get(download.id))!;
  expect(moved).toMatchObject({ progress: 0.2, progress_at: new Date(time).toISOString() });
  expect(moved).not.toHaveProperty('warning');
  // Paused for a day: nothing; resumed: the clock starts at the resume.
  emulator.update(t.hash, { state: 'pausedDL' });
  await reconcile(deps());
  advance(86400);
  expect(await reconcile(deps())).toMatchObject({ warned: 0, timed_out: 0 });
  emulator.update(t.hash, { state: 'stalledDL' });
  await reconcile(deps());
  expect((await deps().store.get(download.id))?.progress_at).toBe(new Date(time).toISOString());
  // The client checks for a day (after its restart): nothing counts, nothing moves the clock.
  emulator.update(t.hash, { state: 'checkingDL' });
  advance(86400);
  expect(await reconcile(deps())).toMatchObject({ warned: 0, timed_out: 0 });
});

it('a restart of the service and of the client in the middle keeps the clock', async () => {
  const t = emulator.addTorrent({ kind: 'v1', state: 'stalledDL', progress: 0.5, category: DEFAULT_CATEGORY });
  const { download } = await ingest(deps(), { infohashes: [t.infohash_v1!] });
  await reconcile(deps());
  const clock = (await deps().store.get(download.id))!.progress_at;
  advance(400);
  // The client restarts: checkingResumeData with progress 0 for a while, then stalledDL 0.5 again.
  emulator.restart(600_000);
  expect(emulator.torrents.get(t.hash)?.state).toBe('checkingResumeData');
  await reconcile(deps(true));
  advance(100);
  emulator.update(t.hash, { state: 'stalledDL', progress: 0.5 });
  await reconcile(deps(true));
  expect((await deps().store.get(download.id))?.progress_at).toBe(clock);
  advance(100);
  expect((await reconcile(deps(true))).warned).toBe(1);
  advance(30);
  expect((await reconcile(deps(true))).timed_out).toBe(1);
  expect(await deps().store.get(download.id)).toMatchObject({ state: 'failed', failure_reason: 'stalled' });
});

it('per-download timeouts from POST /downloads: 0 never ends it; a short one ends it early', async () => {
  const never = emulator.addTorrent({ kind: 'v1', state: 'metaDL', category: DEFAULT_CATEGORY });
  const short = emulator.addTorrent({ kind: 'v1', state: 'metaDL', category: DEFAULT_CATEGORY });
  const a = await ingest(deps(), { infohashes: [never.infohash_v1!], metadata_timeout_s: 0 });
  const b = await ingest(deps(), { infohashes: [short.infohash_v1!], metadata_timeout_s: 5 });
  await reconcile(deps());
  advance(5);
  expect((await reconcile(deps())).warned).toBe(1);
  advance(30 * 86400);
  await reconcile(deps());
  expect((await deps().store.get(a.download.id))?.state).toBe('downloading');
  expect((await deps().store.get(b.download.id))?.state).toBe('failed');
  await expect(ingest(deps(), { infohashes: [v1().infohash], stall_timeout_s: -1 })).rejects.toThrow(RangeError);
});

import { DynamoDownloadStore } from '../../../lib/downloads/dynamodb-store';
import { reconcile, ReconcileDeps } from '../../../lib/downloads/reconcile';
import { ingest } from '../../../lib/downloads/service';
import { toDto } from '../../../lib/downloads/model';
import type { ShareAction, ShareSettings } from '../../../lib/downloads/share-goals';
import type { DownloadStore } from '../../../lib/downloads/store';
import { silentLogger } from '../../../lib/log';
import { DEFAULT_CATEGORY, QBittorrentClient } from '../../../lib/torrents/qbittorrent';
import { QbittorrentEmulator } from '../../../emulator/qbittorrent/emulator';
import type { Profile } from '../../../emulator/qbittorrent/profiles';
import { isolatedTable, stackClients } from '../../support/stack';

/**
 * Seeding goals (lib/downloads/share-goals.ts) through the API's ingest and the poll, on DynamoDB Local and the
 * qBittorrent emulator: the goal handed to the client on add, the ratio and the poll's own clock deciding
 * "met", the torrent removed with or without its files once, never one outside our category, and a crash
 * between the delete and its record finished by a later poll.
 */
const aws = stackClients();
let table: { name: string; drop: () => Promise<void> };
let store: DynamoDownloadStore;
let emulator: QbittorrentEmulator;
let baseUrl: string;

beforeAll(async () => {
  table = await isolatedTable(aws, 'DownloadsTable');
  store = new DynamoDownloadStore({ documents: aws.documents, table: table.name });
});
afterAll(async () => {
  await table.drop();
  aws.dynamodb.destroy();
});
afterEach(() => emulator.close());

const client = (over: { allCategories?: boolean } = {}) =>
  new QBittorrentClient({ baseUrl, auth: { kind: 'password', username: 'admin', password: 'pw' }, ...over });

async function start(profile: Profile = '5.2') {
  emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile });
  baseUrl = await emulator.listen();
}

const KEEP: ShareSettings = { ratio: null, timeS: 0, action: 'keep' };
const deps = (over: Partial<ReconcileDeps> = {}): ReconcileDeps => ({
  store,
  torrents: client(),
  log: silentLogger,
  disk: { reserveBytes: null },
  share: KEEP,
  ...over,
});

const hex = (c: string) => c.repeat(40);
/** Ingested through the service (the API's path) with a goal; the client then has it, named by its hash. */
async function ingested(c: string, goal: { share_ratio?: number; share_time_s?: number; share_action?: ShareAction }) {
  const { download } = await ingest(
    { store, torrents: client(), log: silentLogger },
    { infohashes: [hex(c)], name: `film-${c}`, ...goal },
  );
  return download;
}
const complete = (hash: string, over: Record<string, unknown> = {}) =>
  emulator.update(hash, { state: 'uploading', progress: 1, ...over });

it.each(['5.2', '4.6'] as const)(
  'qBittorrent %s: a ratio goal handed to the client on add; met, the torrent is removed with its files once',
  async (profile) => {
    await start(profile);
    const d = await ingested('a', { share_ratio: 1.5, share_action: 'remove_files' });
    const t = emulator.torrents.get(hex('a'))!;
    // qBittorrent's own limit: the ratio as sent; no time (the global one).
    expect(t).toMatchObject({ ratio_limit: 1.5, seeding_time_limit: -2, category: DEFAULT_CATEGORY });
    const poll = deps();
    await reconcile(poll);
    complete(t.hash, { ratio: 0.4 });
    await reconcile(poll);
    let row = (await store.get(d.id))!;
    expect(row).toMatchObject({ state: 'completed', share_ratio: 1.5, share_action: 'remove_files' });
    expect(row.seeding_since).toBeDefined();
    expect(row.share_met_at).toBeUndefined();
    expect(emulator.torrents.get(t.hash)).toMatchObject({ ratio_limit: 1.5 }); // setShareLimits told it again
    expect(toDto(row).share).toMatchObject({ ratio: 1.5, action: 'remove_files' });

    emulator.update(t.hash, { ratio: 1.5 }); // the boundary itself meets the goal
    const met = await reconcile(poll);
    expect(met).toMatchObject({ share_met: 1, share_removed: 1, failed: 0 });
    expect(emulator.deletions).toEqual([{ hash: t.hash, deleteFiles: true }]);
    row = (await store.get(d.id))!;
    expect(row).toMatchObject({ state: 'completed', share_removal: 'remove_files', removed_files: true });
    expect(toDto(row).share).toMatchObject({ removed_files: true, met_at: row.share_met_at });
    // Later polls do nothing more (no second delete, no record rewritten).
    await reconcile(deps());
    expect(emulator.deletions).toHaveLength(1);
    expect((await store.get(d.id))!.revision).toBe(row.revision);
  },
);

it.each(['5.2', '4.6'] as const)(
  "qBittorrent %s: a time goal is met by the poll's own clock though the client's seeding_time froze; files kept",
  async (profile) => {
    await start(profile);
    const d = await ingested('b', { share_time_s: 60, share_action: 'remove' });
    expect(emulator.torrents.get(hex('b'))).toMatchObject({ seeding_time_limit: 1, ratio_limit: -2 });
    complete(hex('b'), { seeding_time: 0 });
    await reconcile(deps());
    expect((await store.get(d.id))!.seeding_since).toBeDefined();
    // 59 s later: not yet. 61 s later: met, though the client still says 0 s (a 4.5 idle seed).
    await reconcile(deps({ now: () => Date.now() + 59_000 }));
    expect(emulator.deletions).toHaveLength(0);
    await reconcile(deps({ now: () => Date.now() + 61_000 }));
    expect(emulator.deletions).toEqual([{ hash: hex('b'), deleteFiles: false }]);
    expect(await store.get(d.id)).toMatchObject({ removed_files: false, share_removal: 'remove' });
  },
);

it('a torrent added by hand in another category is never touched, even when adopted by a removing default', async () => {
  await start('5.2');
  const mine = emulator.addTorrent({ kind: 'v1', name: 'mine', category: DEFAULT_CATEGORY, progress: 1 });
  const theirs = emulator.addTorrent({ kind: 'v1', name: 'theirs', category: 'movies', progress: 1 });
  complete(mine.hash);
  complete(theirs.hash);
  // Adopting every category, with a default that removes at completion (no goal): only ours goes.
  const report = await reconcile(
    deps({ torrents: client({ allCategories: true }), share: { ratio: null, timeS: 0, action: 'remove_files' } }),
  );
  expect(report).toMatchObject({ adopted: 2, share_met: 2, failed: 0 });
  expect(emulator.deletions).toEqual([{ hash: mine.hash, deleteFiles: true }]);
  expect(emulator.torrents.has(theirs.hash)).toBe(true);
  const theirsRow = (await store.historyOfInfohash(theirs.hash))[0];
  // Recorded as no longer ours, files kept (nothing of it was deleted).
  expect(theirsRow).toMatchObject({ state: 'completed', removed_files: false });
});

it('two polls at once: the goal is met by one of them, and the torrent removed once', async () => {
  await start('5.2');
  const d = await ingested('c', { share_ratio: 1, share_action: 'remove' });
  await reconcile(deps());
  // Completed and seeding below its goal: the next polls all find a completed download (no state race first).
  complete(hex('c'), { ratio: 0.5 });
  await reconcile(deps());
  expect((await store.get(d.id))!.seeding_since).toBeDefined();
  emulator.update(hex('c'), { ratio: 1 });
  // Three containers, each with its own client and rid: all see the goal met in the same instant.
  const reports = await Promise.all([reconcile(deps()), reconcile(deps()), reconcile(deps())]);
  expect(reports.reduce((n, r) => n + r.share_met, 0)).toBe(1);
  expect(reports.reduce((n, r) => n + r.share_removed, 0)).toBe(1);
  expect(emulator.calls.get('/api/v2/torrents/delete')).toBe(1);
  expect(emulator.deletions).toHaveLength(1);
  expect((await store.get(d.id))!.removed_at).toBeDefined();
});

it('a crash between the delete and its record is finished by a later poll, never repeated on a torrent added again', async () => {
  await start('5.2');
  const d = await ingested('e', { share_ratio: 0, share_action: 'remove_files' });
  await reconcile(deps());
  // The store fails the record of the removal once: the poll dies after the client deleted the torrent.
  let crashes = 1;
  const crashing: DownloadStore = Object.create(store);
  crashing.recordShare = async (id, step) => {
    if ('removed' in step && crashes-- > 0) throw new Error('the container died');
    return store.recordShare(id, step);
  };
  complete(hex('e'));
  const crashed = await reconcile(deps({ store: crashing }));
  expect(crashed.failed).toBe(1);
  expect(emulator.deletions).toEqual([{ hash: hex('e'), deleteFiles: true }]);
  expect(await store.get(d.id)).toMatchObject({ share_removal: 'remove_files' });
  expect((await store.get(d.id))!.removed_at).toBeUndefined();
  expect(await store.pendingShareRemovals()).toEqual([d.id]);

  // A person adds the same torrent again, by hand, in our category, already complete.
  const again = emulator.addTorrent({ kind: 'v1', infohash_v1: hex('e'), category: DEFAULT_CATEGORY, progress: 1 });
  complete(again.hash, { added_on: Math.floor(Date.now() / 1000) + 3600 });
  // Within the lease nothing is done (the first poll may still be at it); after it, the record is finished.
  await reconcile(deps());
  expect((await store.get(d.id))!.removed_at).toBeUndefined();
  const later = await reconcile(deps({ now: () => Date.now() + 3 * 60_000 }));
  expect(later.failed).toBe(0);
  expect(emulator.deletions).toHaveLength(1); // the torrent added again is not ours to remove
  expect(emulator.torrents.has(again.hash)).toBe(true);
  expect(await store.get(d.id)).toMatchObject({ removed_files: true });
  expect(await store.pendingShareRemovals()).toEqual([]);
});

it('the crash case with the torrent gone: the marker alone finishes the record', async () => {
  await start('5.1');
  const d = await ingested('f', { share_ratio: 0, share_action: 'remove' });
  await reconcile(deps());
  const crashing: DownloadStore = Object.create(store);
  crashing.recordShare = async (id, step) => {
    if ('removed' in step) throw new Error('the container died');
    return store.recordShare(id, step);
  };
  complete(hex('f'));
  await reconcile(deps({ store: crashing }));
  expect(emulator.torrents.has(hex('f'))).toBe(false);
  const report = await reconcile(deps({ now: () => Date.now() + 3 * 60_000 }));
  expect(report).toMatchObject({ share_removed: 1, failed: 0 });
  expect(await store.get(d.id)).toMatchObject({ removed_files: false });
  expect(emulator.deletions).toHaveLength(1);
});

it('hostile figures: a negative ratio or a seeding_time beyond the torrent age meets no goal', async () => {
  await start('4.6');
  const d = await ingested('9', { share_ratio: 2, share_time_s: 86_400, share_action: 'remove' });
  await reconcile(deps());
  complete(hex('9'), { ratio: -5, seeding_time: 10 ** 12 });
  await reconcile(deps());
  await reconcile(deps({ now: () => Date.now() + 60_000 }));
  expect(emulator.deletions).toHaveLength(0);
  const row = (await store.get(d.id))!;
  expect(row.share_met_at).toBeUndefined();
  expect(row.seeding_since).toBeDefined();
});

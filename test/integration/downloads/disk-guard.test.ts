import { DynamoDiskRecordStore } from '../../../lib/downloads/dynamodb-disk';
import { DynamoDownloadStore } from '../../../lib/downloads/dynamodb-store';
import { reconcile, ReconcileDeps } from '../../../lib/downloads/reconcile';
import { toDto } from '../../../lib/downloads/model';
import { silentLogger } from '../../../lib/log';
import { DEFAULT_CATEGORY, QBittorrentClient } from '../../../lib/torrents/qbittorrent';
import { QbittorrentEmulator } from '../../../emulator/qbittorrent/emulator';
import type { Profile } from '../../../emulator/qbittorrent/profiles';
import { isolatedTable, stackClients } from '../../support/stack';

/**
 * The disk guard (lib/downloads/disk-guard.ts) through the poll, on DynamoDB Local and the qBittorrent
 * emulator: its free space and each torrent's bytes left are the client's figures; a held download is
 * stopped with its reason written, and started when the space is back, across crashes between the two writes.
 */
const GiB = 1024 ** 3;
const aws = stackClients();
let table: { name: string; drop: () => Promise<void> };
let store: DynamoDownloadStore;
let records: DynamoDiskRecordStore;
let emulator: QbittorrentEmulator;
let baseUrl: string;
let torrents: QBittorrentClient;

beforeAll(async () => {
  table = await isolatedTable(aws, 'DownloadsTable');
  store = new DynamoDownloadStore({ documents: aws.documents, table: table.name });
  records = new DynamoDiskRecordStore({ documents: aws.documents, table: table.name });
});
afterAll(async () => {
  await table.drop();
  aws.dynamodb.destroy();
});
afterEach(() => emulator.close());

async function start(profile: Profile = '5.2') {
  emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile });
  baseUrl = await emulator.listen();
  torrents = fresh();
}

const deps = (over: Partial<ReconcileDeps> = {}): ReconcileDeps => ({
  store,
  torrents,
  log: silentLogger,
  disk: { reserveBytes: 5 * GiB },
  diskRecords: records,
  ...over,
});

/** A torrent in the client with its size known and `left` bytes still to write, adopted by a first poll. */
async function adopted(name: string, left: number, over: Record<string, unknown> = {}) {
  const t = emulator.addTorrent({ kind: 'v1', name, category: DEFAULT_CATEGORY, progress: 0.1 });
  emulator.update(t.hash, { size: left + GiB, amount_left: left, state: 'downloading', ...over });
  return t;
}
/** Another container's client: its own session and maindata rid. */
const fresh = () => new QBittorrentClient({ baseUrl, auth: { kind: 'password', username: 'admin', password: 'pw' } });
const downloadOf = async (hash: string) => (await store.findActiveByInfohash(hash))!;
const stateIn = (hash: string) => emulator.torrents.get(hash)!.state;

it.each(['5.2', '4.6'] as const)(
  'qBittorrent %s: the download that does not fit is held with its reason, and started when space is freed',
  async (profile) => {
    await start(profile);
    // Adopted one poll apiece, so their ids (creation order) are old < big < young.
    const old = await adopted('old', 6 * GiB);
    await reconcile(deps());
    const big = await adopted('big', 40 * GiB);
    await reconcile(deps());
    const young = await adopted('young', 3 * GiB);
    // This poll adopts (its writes come first), and holds what does not fit: budget 10 GiB, oldest first, so
    // big is held and the younger one that fits still runs.
    emulator.setFreeSpace(15 * GiB);
    const first = await reconcile(deps());
    expect(first).toMatchObject({ adopted: 1, disk_held: 1, failed: 0 });
    const paused = profile === '5.2' ? 'stoppedDL' : 'pausedDL';
    expect([stateIn(old.hash), stateIn(young.hash), stateIn(big.hash)]).toEqual(['downloading', 'downloading', paused]);
    expect(toDto(await downloadOf(big.hash)).hold).toEqual({
      reason: 'disk_space',
      since: expect.any(String),
      needed_bytes: 40 * GiB,
      free_bytes: 15 * GiB,
    });
    expect(await records.read()).toMatchObject({ free_bytes: 15 * GiB, reserve_bytes: 5 * GiB, held: 1 });

    // The poll follows the client's pause: the download is `paused`, still held. Nothing more to do.
    expect(await reconcile(deps())).toMatchObject({ updated: 1, disk_held: 0, disk_started: 0, failed: 0 });
    expect((await downloadOf(big.hash)).state).toBe('paused');

    // Space freed: the next delta carries the free space, and the held download starts (its hold cleared).
    emulator.setFreeSpace(100 * GiB);
    expect(await reconcile(deps())).toMatchObject({ full: false, disk_started: 1, failed: 0 });
    expect(stateIn(big.hash)).toBe('downloading');
    expect(toDto(await downloadOf(big.hash)).hold).toBeUndefined();
    expect(await reconcile(deps())).toMatchObject({ disk_held: 0, disk_started: 0 });
    expect((await downloadOf(big.hash)).state).toBe('downloading');
  },
);

it("a person's pause is never undone, and a torrent outside the product's category is not counted", async () => {
  await start();
  emulator.setFreeSpace(100 * GiB);
  const mine = await adopted('mine', GiB, { state: 'stoppedDL' });
  const other = emulator.addTorrent({ kind: 'v1', name: 'theirs', category: 'movies' });
  emulator.update(other.hash, { size: 900 * GiB, amount_left: 900 * GiB, state: 'downloading' });
  const small = await adopted('small', GiB);
  expect(await reconcile(deps())).toMatchObject({ adopted: 2, disk_held: 0, disk_started: 0 });
  expect(await reconcile(deps())).toMatchObject({ disk_held: 0, disk_started: 0 });
  expect([stateIn(mine.hash), stateIn(other.hash), stateIn(small.hash)]).toEqual([
    'stoppedDL',
    'downloading',
    'downloading',
  ]);
  expect(toDto(await downloadOf(mine.hash)).hold).toBeUndefined();
});

it('a crash between the hold and the stop, or between the start and the clear, converges at the next poll', async () => {
  await start();
  emulator.setFreeSpace(6 * GiB);
  const t = await adopted('x', 10 * GiB);
  // The hold is written, then the stop is lost (the client hung up): the torrent still runs.
  const lostStop = Object.create(torrents) as QBittorrentClient;
  lostStop.stop = async () => {
    throw new Error('socket hang up');
  };
  expect(await reconcile(deps({ torrents: lostStop }))).toMatchObject({ adopted: 1, failed: 0 });
  expect((await downloadOf(t.hash)).hold).toBe('disk_space');
  expect(stateIn(t.hash)).toBe('downloading');
  // The next poll finds it held and running: stopped again, no second hold written.
  const revision = (await downloadOf(t.hash)).revision;
  await reconcile(deps());
  expect(stateIn(t.hash)).toBe('stoppedDL');
  expect((await downloadOf(t.hash)).revision).toBe(revision);

  // Space back; the start is applied, then the clear fails (DynamoDB throttled): the hold stays, the torrent runs.
  await reconcile(deps()); // follows the pause
  emulator.setFreeSpace(100 * GiB);
  const failingClear = Object.create(store) as DynamoDownloadStore;
  failingClear.updateDetails = async (id, details) => {
    if (details.hold === null) throw new Error('ProvisionedThroughputExceededException');
    return store.updateDetails(id, details);
  };
  await reconcile(deps({ store: failingClear }));
  expect(stateIn(t.hash)).toBe('downloading');
  expect((await downloadOf(t.hash)).hold).toBe('disk_space');
  // Nothing is paused and everything fits: a delta reads nothing more. The next full update (here a new
  // container's first) sees it held and running with room: the hold is released, nothing stopped.
  await reconcile(deps());
  expect((await downloadOf(t.hash)).hold).toBe('disk_space');
  await reconcile(deps({ torrents: fresh() }));
  expect(toDto(await downloadOf(t.hash)).hold).toBeUndefined();
  expect(stateIn(t.hash)).toBe('downloading');
});

it('two polls at once (two containers) hold the download once and leave it consistent', async () => {
  await start();
  emulator.setFreeSpace(6 * GiB);
  const t = await adopted('x', 10 * GiB);
  await reconcile(deps({ disk: { reserveBytes: null } })); // adopted, the guard off
  expect(stateIn(t.hash)).toBe('downloading');
  const reports = await Promise.all([reconcile(deps()), reconcile(deps({ torrents: fresh() }))]);
  expect(reports.every((r) => r.failed === 0)).toBe(true);
  expect(stateIn(t.hash)).toBe('stoppedDL');
  const held = await downloadOf(t.hash);
  expect(held.hold).toBe('disk_space');
  expect(held.hold_needed_bytes).toBe(10 * GiB);
});

it('the guard off: nothing is held, whatever the figures', async () => {
  await start();
  emulator.setFreeSpace(0);
  const t = await adopted('x', 10 * GiB);
  expect(await reconcile(deps({ disk: { reserveBytes: null } }))).toMatchObject({ adopted: 1, disk_held: 0 });
  expect(await reconcile(deps({ disk: { reserveBytes: null } }))).toMatchObject({ disk_held: 0 });
  expect(stateIn(t.hash)).toBe('downloading');
});

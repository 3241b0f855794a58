import { DynamoDownloadStore } from '../../../lib/downloads/dynamodb-store';
import { reconcile, ReconcileDeps } from '../../../lib/downloads/reconcile';
import { toDto } from '../../../lib/downloads/model';
import { formatBytes, formatSeconds, formatSpeed } from '../../../lib/i18n';
import { silentLogger } from '../../../lib/log';
import { DEFAULT_CATEGORY, QBittorrentClient } from '../../../lib/torrents/qbittorrent';
import { cardPage, listPage } from '../../../lib/web/pages';
import { uiOf } from '../../../lib/web/locale';
import { QbittorrentEmulator } from '../../../emulator/qbittorrent/emulator';
import { isolatedTable, stackClients } from '../../support/stack';

/**
 * The transfer figures (lib/downloads/transfer.ts) through the poll, on DynamoDB Local and the qBittorrent
 * emulator: the card shows the client's own figures, in en and ru; figures-only writes are bounded; the
 * client's nonsense is never shown; a figures write never undoes a state change that raced it.
 */
const GiB = 1024 ** 3;
const aws = stackClients();
let table: { name: string; drop: () => Promise<void> };
let store: DynamoDownloadStore;
let emulator: QbittorrentEmulator;
let torrents: QBittorrentClient;
let clock = Date.now();

beforeAll(async () => {
  table = await isolatedTable(aws, 'DownloadsTable');
  store = new DynamoDownloadStore({ documents: aws.documents, table: table.name });
  emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile: '5.2' });
  torrents = new QBittorrentClient({
    baseUrl: await emulator.listen(),
    auth: { kind: 'password', username: 'admin', password: 'pw' },
  });
});
afterAll(async () => {
  await emulator.close();
  await table.drop();
  aws.dynamodb.destroy();
});

const deps = (over: Partial<ReconcileDeps> = {}): ReconcileDeps => ({
  store,
  torrents,
  log: silentLogger,
  disk: { reserveBytes: null },
  now: () => clock,
  ...over,
});
const viewer = { canWrite: false } as Parameters<typeof cardPage>[2];
const downloadOf = async (hash: string) => (await store.findActiveByInfohash(hash))!;

it("the card and the list show the client's own figures, in en and ru", async () => {
  const t = emulator.addTorrent({ kind: 'v1', name: 'figures', category: DEFAULT_CATEGORY });
  emulator.update(t.hash, {
    size: 4 * GiB,
    progress: 0.25,
    dlspeed: 1_572_864,
    upspeed: 20_480,
    eta: 8190,
    num_seeds: 12,
    num_leechs: 3,
    ratio: 0.5,
  });
  await reconcile(deps());
  const client = emulator.torrents.get(t.hash)!;
  const d = await downloadOf(t.hash);
  expect(d).toMatchObject({
    size_bytes: client.size,
    downloaded_bytes: client.downloaded,
    dl_speed: client.dlspeed,
    up_speed: client.upspeed,
    eta_s: client.eta,
    seeds: client.num_seeds,
    peers: client.num_leechs,
    ratio: client.ratio,
  });
  expect(client.downloaded).toBe(GiB);
  expect(toDto(d).transfer).toMatchObject({ size_bytes: 4 * GiB, at: d.transfer_at });
  for (const lang of ['en', 'ru'] as const) {
    const ui = uiOf(lang, 'UTC');
    const card = String(cardPage(ui, d, viewer, { needsReview: false }).body);
    const cell = (key: string) => new RegExp(`data-transfer="${key}">([^<]*)<`).exec(card)?.[1];
    expect(cell('size')).toBe(formatBytes(lang, client.size as number));
    expect(cell('downloaded')).toBe(formatBytes(lang, client.downloaded as number));
    expect(cell('dl_speed')).toBe(formatSpeed(lang, client.dlspeed as number));
    expect(cell('up_speed')).toBe(formatSpeed(lang, client.upspeed as number));
    expect(cell('eta')).toBe(formatSeconds(lang, client.eta as number));
    expect(cell('peers')).toBe('12 / 3');
    expect(cell('ratio')).toBe(lang === 'en' ? '0.50' : '0,50');
    const list = String(listPage(ui, { items: [d], paged: false }).body);
    expect(list).toContain(formatBytes(lang, 4 * GiB));
    expect(list).toContain(formatSpeed(lang, 1_572_864));
  }
  expect(String(cardPage(uiOf('ru', 'UTC'), d, viewer, { needsReview: false }).body)).toContain('2\u00a0ч 16\u00a0мин');
});

it('figures alone are written at most every interval; with progress at once', async () => {
  const t = emulator.addTorrent({ kind: 'v1', name: 'bounded', category: DEFAULT_CATEGORY });
  emulator.update(t.hash, { size: GiB, progress: 0.5, dlspeed: 1000 });
  await reconcile(deps());
  const first = await downloadOf(t.hash);
  // Only the speed moves: not written within the interval...
  for (const speed of [2000, 3000, 4000]) {
    emulator.update(t.hash, { dlspeed: speed });
    clock += 30_000;
    await reconcile(deps());
  }
  expect((await downloadOf(t.hash)).revision).toBe(first.revision);
  // ...and written once it is over, with the latest figures.
  clock += 60_000;
  emulator.update(t.hash, { dlspeed: 5000 });
  await reconcile(deps());
  const late = await downloadOf(t.hash);
  expect(late).toMatchObject({ revision: first.revision + 1, dl_speed: 5000 });
  // Progress is written at once, the figures with it.
  emulator.update(t.hash, { progress: 0.6, dlspeed: 6000 });
  clock += 1000;
  await reconcile(deps());
  expect(await downloadOf(t.hash)).toMatchObject({ revision: late.revision + 1, progress: 0.6, dl_speed: 6000 });
});

it("the client's nonsense is never shown: infinite ETA, negatives, huge numbers", async () => {
  const t = emulator.addTorrent({ kind: 'v1', name: 'nonsense', category: DEFAULT_CATEGORY });
  emulator.update(t.hash, {
    size: GiB,
    progress: 0.1,
    eta: 8_640_000,
    dlspeed: -5,
    upspeed: 1e300,
    num_seeds: 2.5,
    ratio: -1,
  });
  await reconcile(deps());
  const d = await downloadOf(t.hash);
  expect(d.eta_s).toBeUndefined();
  expect(d.dl_speed).toBeUndefined();
  expect(d.up_speed).toBeUndefined();
  expect(d.seeds).toBeUndefined();
  expect(d.ratio).toBeUndefined();
  const card = String(cardPage(uiOf('en', 'UTC'), d, viewer, { needsReview: false }).body);
  expect(card).toContain('data-transfer="eta">unknown<');
  expect(card).not.toMatch(/NaN|Infinity|-5|e\+300/);
});

it('a figures write racing a state change never undoes it (the same guarded CAS)', async () => {
  const t = emulator.addTorrent({ kind: 'v1', name: 'race', category: DEFAULT_CATEGORY });
  emulator.update(t.hash, { size: GiB, progress: 0.2 });
  await reconcile(deps());
  const d = await downloadOf(t.hash);
  for (let i = 0; i < 5; i++) {
    emulator.update(t.hash, { progress: 0.3 + i / 10, dlspeed: 100 + i, upspeed: i });
    clock += 1000;
    const [, moved] = await Promise.all([
      reconcile(deps()),
      i === 4 ? store.setDownloadState(d.id, 'downloading', 'cancelled') : Promise.resolve(undefined),
    ]);
    if (moved) expect(moved.state).toBe('cancelled');
  }
  const after = (await store.get(d.id))!;
  expect(after.state).toBe('cancelled');
  expect(after.cancelled_at).toBeDefined();
  // Both writers' changes stand: the revision counts every write, none was lost.
  expect(after.revision).toBeGreaterThan(d.revision + 4);
});

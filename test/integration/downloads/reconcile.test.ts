import { reconcile } from '../../../lib/downloads/reconcile';
import { ingest, retry } from '../../../lib/downloads/service';
import { silentLogger } from '../../../lib/log';
import { QBittorrentClient } from '../../../lib/torrents/qbittorrent';
import { QbittorrentEmulator } from '../../../emulator/qbittorrent/emulator';
import { TorrentClientError } from '../../../lib/torrents/client';
import { assertOneActivePerHash, downloadsStore, itemsAbout, v1 } from '../../support/downloads';

/** The poll against a real HTTP emulator and DynamoDB Local (each test its own emulator). */
const { aws, table, store } = downloadsStore();
let emulator: QbittorrentEmulator;
let torrents: QBittorrentClient;
const deps = () => ({ store, torrents, log: silentLogger });

beforeEach(async () => {
  emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw' });
  torrents = new QBittorrentClient({ baseUrl: await emulator.listen(), username: 'admin', password: 'pw' });
});
afterEach(() => emulator.close());
afterAll(() => aws.dynamodb.destroy());

describe('reconcile', () => {
  it('adopts torrents of all four kinds, storing only full hashes', async () => {
    const [a, b, c, d] = (['v1', 'v2', 'hybrid', 'legacy'] as const).map((kind) => emulator.addTorrent({ kind, state: 'downloading' }));
    expect((await reconcile(deps())).adopted).toBe(4);

    expect((await store.findActiveByInfohash(a.infohash_v1!))?.infohashes).toEqual([{ infohash: a.infohash_v1, kind: 'v1' }]);
    expect((await store.findActiveByInfohash(b.infohash_v2!))?.infohashes).toEqual([{ infohash: b.infohash_v2, kind: 'v2' }]);
    // The truncated v2 `hash` of the v2-only torrent is stored nowhere.
    expect(await itemsAbout(aws, table, [`IH#${b.hash}|`])).toEqual([]);
    expect(await itemsAbout(aws, table, [`IH#${b.infohash_v2}|`])).not.toEqual([]);
    const hybrid = await store.findActiveByInfohash(c.infohash_v1!);
    expect(hybrid?.infohashes.map((h) => h.kind)).toEqual(['v1', 'v2']);
    expect(hybrid?.state).toBe('downloading');
    expect((await store.findActiveByInfohash(d.hash))?.name).toBe(d.name);

    // A second poll changes nothing.
    expect(await reconcile(deps())).toMatchObject({ adopted: 0, unchanged: 4 });
  });

  it('matches by any hash, appends the missing one, follows the client state', async () => {
    const t = emulator.addTorrent({ kind: 'hybrid', state: 'downloading' });
    const { download } = await ingest(deps(), { infohashes: [t.infohash_v2!] }); // known by v2 only
    emulator.torrents.get(t.hash)!.state = 'stalledUP';
    await reconcile(deps());
    const after = await store.get(download.id);
    expect(after?.infohashes.map((h) => h.infohash)).toEqual([t.infohash_v1, t.infohash_v2]);
    expect(after?.state).toBe('completed');
    expect(await store.findActiveByInfohash(t.infohash_v1!)).toBeUndefined(); // completed released the guards
  });

  it('resurrects a finished download whose torrent is alive again', async () => {
    const t = emulator.addTorrent({ kind: 'v1', state: 'downloading' });
    const { download } = await ingest(deps(), { infohashes: [t.infohash_v1!] });
    await store.setDownloadState(download.id, 'downloading', 'cancelled').catch(() => store.setDownloadState(download.id, 'queued', 'cancelled'));
    expect((await reconcile(deps())).resurrected).toBe(1);
    expect((await store.get(download.id))?.state).toBe('downloading');
    await assertOneActivePerHash(aws, table, [t.infohash_v1!]);
  });

  it('polls racing each other and an ingest still leave one active download per hash', async () => {
    const ts = Array.from({ length: 5 }, () => emulator.addTorrent({ kind: 'hybrid', state: 'downloading' }));
    await Promise.all([
      reconcile(deps()),
      reconcile(deps()),
      reconcile(deps()),
      ...ts.map((t) => ingest(deps(), { infohashes: [t.infohash_v2!] })),
    ]);
    await assertOneActivePerHash(aws, table, ts.flatMap((t) => [t.infohash_v1!, t.infohash_v2!]));
    for (const t of ts) expect((await store.findActiveByInfohash(t.infohash_v1!))?.id).toBe((await store.findActiveByInfohash(t.infohash_v2!))?.id);
  });

  it('skips a torrent without a valid hash and goes on with the others', async () => {
    emulator.torrents.set('junk', { hash: 'junk', name: 'junk', state: 'downloading', progress: 0, added_on: 0 });
    emulator.addTorrent({ kind: 'v1' });
    expect(await reconcile(deps())).toMatchObject({ skipped: 1, adopted: 1, failed: 0 });
  });
});

describe('ingest and retry with the torrent client', () => {
  it('ingest hands a new download to the client; a refused add leaves it stuck, not lost', async () => {
    const h = v1();
    const ok = await ingest(deps(), { magnet: `magnet:?xt=urn:btih:${h.infohash}&dn=ok` });
    expect(ok.download.state).toBe('queued');
    expect(emulator.torrents.has(h.infohash)).toBe(true);

    emulator.faults.add = 'fail';
    const refused = await ingest(deps(), { infohashes: [v1().infohash] });
    expect(refused).toMatchObject({ created: true, download: { state: 'stuck' } });
  });

  it('retry activates, adds to the client, and rolls back when the client refuses', async () => {
    const h = v1();
    const { download } = await ingest(deps(), { infohashes: [h.infohash] });
    await store.setDownloadState(download.id, 'queued', 'failed');
    emulator.torrents.clear();

    emulator.faults.add = 'fail';
    await expect(retry(deps(), download.id)).rejects.toBeInstanceOf(TorrentClientError);
    expect((await store.get(download.id))?.state).toBe('failed');
    expect(await store.findActiveByInfohash(h.infohash)).toBeUndefined();

    emulator.faults.add = 'ok';
    expect((await retry(deps(), download.id)).state).toBe('queued');
    expect(emulator.torrents.has(h.infohash)).toBe(true);
    await assertOneActivePerHash(aws, table, [h.infohash]);
  });
});

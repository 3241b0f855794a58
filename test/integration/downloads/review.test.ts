import { ActiveExistsError, NotACandidateError } from '../../../lib/downloads/errors';
import { ingest, listDownloads, relink, reviewDownload } from '../../../lib/downloads/service';
import { silentLogger } from '../../../lib/log';
import { QBittorrentClient } from '../../../lib/torrents/qbittorrent';
import { QbittorrentEmulator } from '../../../emulator/qbittorrent/emulator';
import { TorrentClientError } from '../../../lib/torrents/errors';
import { assertOneActivePerHash, downloadsStore, v1, v2 } from '../../support/downloads';

/** The review page's use cases (relink = the guarded activateIfNoOtherActive) on DynamoDB Local and the client emulator. */
const { aws, table, store } = downloadsStore();
let emulator: QbittorrentEmulator;
let torrents: QBittorrentClient;
const deps = () => ({ store, torrents, log: silentLogger });

beforeEach(async () => {
  emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw' });
  torrents = new QBittorrentClient({
    baseUrl: await emulator.listen(),
    auth: { kind: 'password', username: 'admin', password: 'pw' },
  });
});
afterEach(() => emulator.close());
afterAll(() => aws.dynamodb.destroy());

/** Three downloads of one hash, none active: the person chooses. */
async function contested() {
  const h = v1();
  const ids: string[] = [];
  for (const name of ['a', 'b', 'c']) {
    const { download } = await ingest(deps(), {
      infohashes: [h.infohash, ...(name === 'c' ? [v2().infohash] : [])],
      name,
    });
    await store.setDownloadState(download.id, 'queued', 'failed');
    ids.push(download.id);
  }
  return { h, ids };
}

it('lists every download sharing a hash, newest first, with the reasons', async () => {
  const { ids } = await contested();
  const review = await reviewDownload(deps(), ids[0]);
  expect(review.candidates.map((c) => c.id)).toEqual([...ids].reverse());
  expect(review.reasons).toEqual(['failed', 'shares_infohash']);
});

it('concurrent relinks of different candidates: exactly one wins, the others name it', async () => {
  const { h, ids } = await contested();
  const results = await Promise.allSettled(ids.map((id) => relink(deps(), ids[0], id)));
  const won = results.filter((r) => r.status === 'fulfilled');
  expect(won).toHaveLength(1);
  const winner = (won[0] as PromiseFulfilledResult<{ id: string }>).value.id;
  for (const r of results.filter((r) => r.status === 'rejected')) {
    const err = (r as PromiseRejectedResult).reason;
    // Lost the guard (naming the winner) or the CAS race on the same item; never a second active download.
    if (err instanceof ActiveExistsError) expect(err.ownerId).toBe(winner);
  }
  await assertOneActivePerHash(aws, table, [h.infohash]);
});

it('refuses a download that shares no hash, and rolls back when the client refuses', async () => {
  const { h, ids } = await contested();
  const { download: stranger } = await ingest(deps(), { infohashes: [v1().infohash] });
  await expect(relink(deps(), ids[0], stranger.id)).rejects.toBeInstanceOf(NotACandidateError);

  // A torrent still in the client counts as added (a duplicate); the refusal must be of a torrent that is not there.
  emulator.clear();
  emulator.faults.add = 'fail';
  await expect(relink(deps(), ids[0], ids[1])).rejects.toBeInstanceOf(TorrentClientError);
  expect((await store.get(ids[1]))?.state).toBe('failed');
  expect(await store.findActiveByInfohash(h.infohash)).toBeUndefined();
});

it('filters the list by state, for names and for hash prefixes', async () => {
  const { h, ids } = await contested();
  await relink(deps(), ids[0], ids[2]);
  const byPrefix = await listDownloads(deps(), { q: h.infohash.slice(0, 8), state: 'queued', limit: 10 });
  expect(byPrefix.items.map((d) => d.id)).toEqual([ids[2]]);
  const failed = await listDownloads(deps(), { q: h.infohash.slice(0, 8), state: 'failed', limit: 1 });
  expect(failed.items.map((d) => d.id)).toEqual([ids[1]]);
  expect(failed.cursor).toBeDefined();
  const byState = await listDownloads(deps(), { state: 'queued', limit: 100 });
  expect(byState.items.every((d) => d.state === 'queued')).toBe(true);
  expect(byState.items.map((d) => d.id)).toContain(ids[2]);
});

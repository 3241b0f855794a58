import { DynamoDownloadStore } from '../../../lib/downloads/dynamodb-store';
import { reconcile } from '../../../lib/downloads/reconcile';
import { changeState, ingest, retry } from '../../../lib/downloads/service';
import { createLogger, silentLogger } from '../../../lib/log';
import { TorrentAddRefusedError, TorrentClientAnswerError, TorrentClientError } from '../../../lib/torrents/errors';
import { DEFAULT_CATEGORY, QBittorrentClient, QBittorrentOptions } from '../../../lib/torrents/qbittorrent';
import { NewTorrent, Profile, PROFILES, QbittorrentEmulator } from '../../../emulator/qbittorrent/emulator';
import { assertOneActivePerHash, itemsAbout, v1, v2 } from '../../support/downloads';
import { isolatedTable, stackClients } from '../../support/stack';

/**
 * The poll against the HTTP emulator in each profile users run (4.6, 5.1, 5.2)
 * and DynamoDB Local. A private table: the missing-torrent check reads every
 * active download, which must be this file's only.
 */
const aws = stackClients();
let table: { name: string; drop: () => Promise<void> };
let store: DynamoDownloadStore;
beforeAll(async () => {
  table = await isolatedTable(aws, 'DownloadsTable');
  store = new DynamoDownloadStore({ documents: aws.documents, table: table.name });
});
afterAll(async () => {
  await table.drop();
  aws.dynamodb.destroy();
});

const ours = (spec: NewTorrent): NewTorrent => ({ category: DEFAULT_CATEGORY, ...spec });

describe.each<Profile>(PROFILES)('qBittorrent %s profile', (profile) => {
  let emulator: QbittorrentEmulator;
  let url: string;
  let torrents: QBittorrentClient;
  const client = (opts: Partial<QBittorrentOptions> = {}) =>
    new QBittorrentClient({
      baseUrl: url,
      auth: { kind: 'password', username: 'admin', password: 'pw' },
      timeoutMs: 1000,
      ...opts,
    });
  const deps = (t: QBittorrentClient = torrents, extra = {}) => ({ store, torrents: t, log: silentLogger, ...extra });

  beforeEach(async () => {
    emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile, apiKey: 'qbt_testkey123456' });
    url = await emulator.listen();
    torrents = client();
  });
  afterEach(() => emulator.close());

  it('adopts torrents of all four kinds in our category, storing only full hashes; the next poll reads only changes', async () => {
    const [a, b, c, d] = (['v1', 'v2', 'hybrid', 'legacy'] as const).map((kind) =>
      emulator.addTorrent(ours({ kind, state: 'downloading', progress: 0.25 })),
    );
    expect(await reconcile(deps())).toMatchObject({ full: true, adopted: 4, failed: 0 });

    expect((await store.findActiveByInfohash(a.infohash_v1!))?.infohashes).toEqual([
      { infohash: a.infohash_v1, kind: 'v1' },
    ]);
    expect((await store.findActiveByInfohash(b.infohash_v2!))?.infohashes).toEqual([
      { infohash: b.infohash_v2, kind: 'v2' },
    ]);
    // The truncated v2 `hash` of the v2-only and hybrid torrents is stored nowhere.
    expect(await itemsAbout(aws, table.name, [`IH#${b.hash}|`, `IH#${c.hash}|`])).toEqual([]);
    const hybrid = await store.findActiveByInfohash(c.infohash_v1!);
    expect(hybrid?.infohashes.map((h) => h.kind)).toEqual(['v1', 'v2']);
    expect(hybrid).toMatchObject({ state: 'downloading', progress: 0.25 });
    expect((await store.findActiveByInfohash(d.hash))?.name).toBe(d.name);

    // Incremental: nothing changed, nothing looked at.
    expect(await reconcile(deps())).toMatchObject({ full: false, adopted: 0, unchanged: 0, updated: 0, torrents: 4 });
    emulator.update(a.hash, { progress: 0.5 });
    expect(await reconcile(deps())).toMatchObject({ full: false, updated: 1, unchanged: 0 });
    expect((await store.findActiveByInfohash(a.infohash_v1!))?.progress).toBe(0.5);
  });

  it('matches by any hash, appends the missing one, follows the client state (its own state names)', async () => {
    const t = emulator.addTorrent(ours({ kind: 'hybrid', state: 'downloading' }));
    const { download } = await ingest(deps(), { infohashes: [t.infohash_v2!] }); // known by v2 only
    emulator.update(t.hash, { state: 'pausedDL' });
    await reconcile(deps());
    expect((await store.get(download.id))?.state).toBe('paused');
    expect(emulator.torrents.get(t.hash)?.state).toBe(profile === '4.6' ? 'pausedDL' : 'stoppedDL');
    emulator.update(t.hash, { state: 'stalledUP', progress: 1 });
    await reconcile(deps());
    const after = await store.get(download.id);
    expect(after?.infohashes.map((h) => h.infohash)).toEqual([t.infohash_v1, t.infohash_v2]);
    expect(after).toMatchObject({ state: 'completed', progress: 1 });
    expect(await store.findActiveByInfohash(t.infohash_v1!)).toBeUndefined(); // completed released the guards
  });

  it('hash switch: a hybrid added by a btih-only magnet keeps ONE download with both full hashes, never the truncated one', async () => {
    const h = v1();
    const { download } = await ingest(deps(), { magnet: `magnet:?xt=urn:btih:${h.infohash}&dn=hybrid` });
    expect(emulator.torrents.get(h.infohash)).toMatchObject({
      category: DEFAULT_CATEGORY,
      tags: download.id,
      infohash_v2: '',
    });
    await reconcile(deps());
    const v2full = v2().infohash;
    const switched = emulator.metadataArrives(h.infohash, v2full)!;
    expect(switched.hash).toBe(v2full.slice(0, 40));
    expect(await reconcile(deps())).toMatchObject({ full: false, adopted: 0, failed: 0 });
    const after = await store.get(download.id);
    expect(after?.infohashes).toEqual([h, { infohash: v2full, kind: 'v2' }]);
    expect(await itemsAbout(aws, table.name, [`IH#${v2full.slice(0, 40)}|`])).toEqual([]);
    expect((await store.historyOfInfohash(v2full)).map((d) => d.id)).toEqual([download.id]);
    // A full resync after the switch changes nothing either.
    expect(await reconcile(deps(client()))).toMatchObject({ full: true, adopted: 0, failed: 0 });
    await assertOneActivePerHash(aws, table.name, [h.infohash, v2full]);
  });

  it('a torrent outside our category is not adopted by default, and is when the setting says so', async () => {
    const foreign = emulator.addTorrent({ kind: 'v1', category: 'sonarr' });
    const uncategorised = emulator.addTorrent({ kind: 'v1' });
    expect(await reconcile(deps())).toMatchObject({ adopted: 0, torrents: 0 });
    expect(await store.findActiveByInfohash(foreign.infohash_v1!)).toBeUndefined();

    expect(await reconcile(deps(client({ allCategories: true })))).toMatchObject({ adopted: 2 });
    expect((await store.findActiveByInfohash(foreign.infohash_v1!))?.name).toBe(foreign.name);
    expect(await store.findActiveByInfohash(uncategorised.infohash_v1!)).toBeDefined();
  });

  it('resurrects a failed download whose torrent is alive again', async () => {
    const t = emulator.addTorrent(ours({ kind: 'v1', state: 'downloading' }));
    const { download } = await ingest(deps(), { infohashes: [t.infohash_v1!] });
    await store.setDownloadState(download.id, 'queued', 'failed');
    expect((await reconcile(deps())).resurrected).toBe(1);
    expect((await store.get(download.id))?.state).toBe('downloading');
    await assertOneActivePerHash(aws, table.name, [t.infohash_v1!]);
  });

  it('a client restart (checkingResumeData, progress 0) flips no finished download back, and moves no active one', async () => {
    const done = emulator.addTorrent(ours({ kind: 'hybrid', state: 'uploading', progress: 1 }));
    const busy = emulator.addTorrent(ours({ kind: 'v1', state: 'downloading', progress: 0.5 }));
    const { download: finished } = await ingest(deps(), { infohashes: [done.infohash_v1!, done.infohash_v2!] });
    const { download: active } = await ingest(deps(), { infohashes: [busy.infohash_v1!] });
    await reconcile(deps());
    expect((await store.get(finished.id))?.state).toBe('completed');
    const revisions = {
      finished: (await store.get(finished.id))!.revision,
      active: (await store.get(active.id))!.revision,
    };
    // What real 4.5.2 reports for about a second after a restart; then the check ends in the state it had.
    emulator.restart(60_000);
    expect(emulator.torrents.get(done.hash)).toMatchObject({ state: 'checkingResumeData', progress: 0 });
    for (const checking of ['checkingResumeData', 'checkingUP', 'checkingDL']) {
      emulator.update(done.hash, { state: checking });
      emulator.update(busy.hash, { state: checking });
      expect(await reconcile(deps())).toMatchObject({ resurrected: 0, adopted: 0, updated: 0, failed: 0 });
    }
    // A fresh container after the restart too (full update, nothing known).
    expect(await reconcile(deps(client()))).toMatchObject({ full: true, resurrected: 0, adopted: 0, updated: 0 });
    expect(await store.get(finished.id)).toMatchObject({
      state: 'completed',
      progress: 1,
      revision: revisions.finished,
    });
    expect(await store.get(active.id)).toMatchObject({
      state: 'downloading',
      progress: 0.5,
      revision: revisions.active,
    });
    emulator.update(done.hash, { state: 'stalledUP', progress: 1 });
    emulator.update(busy.hash, { state: 'downloading', progress: 0.6 });
    expect(await reconcile(deps())).toMatchObject({ resurrected: 0, failed: 0 });
    expect((await store.get(finished.id))?.state).toBe('completed');
    expect((await store.get(active.id))?.progress).toBe(0.6);
  });

  it('a cancel removes the torrent; the poll does not resurrect it; a torrent added after the cancel does', async () => {
    const h = v1();
    const { download } = await ingest(deps(), { infohashes: [h.infohash] });
    expect(emulator.torrents.has(h.infohash)).toBe(true);
    await changeState(deps(), download.id, 'cancelled');
    expect(emulator.torrents.has(h.infohash)).toBe(false);
    // A torrent of the same hash that is the cancelled one (added before the cancel) stays ignored.
    const stale = emulator.addTorrent(ours({ kind: 'v1', infohash_v1: h.infohash, state: 'downloading' }));
    emulator.update(stale.hash, { added_on: Math.floor(Date.parse(download.created_at) / 1000) - 5 });
    expect(await reconcile(deps())).toMatchObject({ resurrected: 0, adopted: 0 });
    expect((await store.get(download.id))?.state).toBe('cancelled');
    // Added again after the cancel: that is a new wish, it comes back.
    emulator.remove(stale.hash);
    await new Promise((r) => setTimeout(r, 1100)); // added_on has one-second resolution
    emulator.addTorrent(ours({ kind: 'v1', infohash_v1: h.infohash, state: 'downloading' }));
    expect(await reconcile(deps())).toMatchObject({ resurrected: 1 });
    expect((await store.get(download.id))?.state).toBe('downloading');
  });

  it('a cancel with the stop setting stops the torrent, and the stopped torrent does not bring it back', async () => {
    const h = v1();
    const { download } = await ingest(deps(), { infohashes: [h.infohash] });
    await reconcile(deps());
    await changeState(deps(torrents, { cancel: { action: 'stop', deleteFiles: false } }), download.id, 'cancelled');
    expect(emulator.torrents.get(h.infohash)?.state).toBe(profile === '4.6' ? 'pausedDL' : 'stoppedDL');
    expect(await reconcile(deps())).toMatchObject({ resurrected: 0, failed: 0 });
    expect((await store.get(download.id))?.state).toBe('cancelled');
  });

  it('a download whose torrent vanished is marked missing, then set aside for review after the grace period', async () => {
    const h = v1();
    const { download } = await ingest(deps(), { infohashes: [h.infohash] });
    emulator.remove(h.infohash);
    const full = () => client({ fullResyncMs: 0 });
    // (Counts include other tests' downloads of this table: assert on this one.)
    expect((await reconcile(deps(full(), { missingGraceMs: 60_000 }))).missing).toBeGreaterThanOrEqual(1);
    expect((await store.get(download.id))?.missing_since).toEqual(expect.any(String));
    expect((await store.get(download.id))?.state).toBe('queued'); // within the grace period
    const later = () => Date.now() + 61_000;
    expect((await reconcile(deps(full(), { missingGraceMs: 60_000, now: later }))).set_aside).toBeGreaterThanOrEqual(1);
    expect(await store.get(download.id)).toMatchObject({ state: 'failed', review_reason: 'missing_in_client' });
    expect(await store.findActiveByInfohash(h.infohash)).toBeUndefined();
    // It comes back: the poll resurrects it and the review reason goes.
    emulator.addTorrent(ours({ kind: 'v1', infohash_v1: h.infohash, state: 'downloading' }));
    await reconcile(deps(full()));
    const back = await store.get(download.id);
    expect(back?.state).toBe('downloading');
    expect(back?.review_reason).toBeUndefined();
  });

  it('skips a torrent without a valid hash and goes on with the others', async () => {
    emulator.addTorrent(ours({ kind: 'legacy', infohash_v1: 'junk'.padEnd(40, 'z') }));
    emulator.addTorrent(ours({ kind: 'v1' }));
    expect(await reconcile(deps())).toMatchObject({ skipped: 1, adopted: 1, failed: 0 });
  });

  it('an unknown state is a clear error for that torrent; the others go on and nothing is written for it', async () => {
    const odd = emulator.addTorrent(ours({ kind: 'v1', state: 'quantumDL' }));
    const fine = emulator.addTorrent(ours({ kind: 'v1' }));
    expect(await reconcile(deps())).toMatchObject({ failed: 1, adopted: 1 });
    expect(await itemsAbout(aws, table.name, [`IH#${odd.infohash_v1}`])).toEqual([]);
    expect(await store.findActiveByInfohash(fine.infohash_v1!)).toBeDefined();
  });

  it.each(['html', 'truncated', '500', 'hang'] as const)(
    'a %s answer fails the poll clearly and writes nothing',
    async (fault) => {
      const t = emulator.addTorrent(ours({ kind: 'v1' }));
      emulator.faults.info = fault;
      const bounded = client({ timeoutMs: 300 });
      // maindata is fine: the fault is on torrents/info, which this client falls back to only without maindata.
      Object.assign(bounded, { maindata: false });
      const err = await reconcile(deps(bounded)).catch((e) => e);
      expect(err).toBeInstanceOf(TorrentClientError);
      expect(err.message).toMatch(
        fault === '500' ? /answered 500/ : fault === 'hang' ? /failed: .*(timeout|aborted)/i : /not JSON/,
      );
      if (fault === 'html' || fault === 'truncated') expect(err).toBeInstanceOf(TorrentClientAnswerError);
      expect(await itemsAbout(aws, table.name, [`IH#${t.infohash_v1}`])).toEqual([]);
    },
  );

  it('polls racing each other and an ingest still leave one active download per hash', async () => {
    const ts = Array.from({ length: 5 }, () => emulator.addTorrent(ours({ kind: 'hybrid', state: 'downloading' })));
    await Promise.all([
      reconcile(deps(client())),
      reconcile(deps(client())),
      reconcile(deps(client())),
      ...ts.map((t) => ingest(deps(), { infohashes: [t.infohash_v2!] })),
    ]);
    await assertOneActivePerHash(
      aws,
      table.name,
      ts.flatMap((t) => [t.infohash_v1!, t.infohash_v2!]),
    );
    for (const t of ts)
      expect((await store.findActiveByInfohash(t.infohash_v1!))?.id).toBe(
        (await store.findActiveByInfohash(t.infohash_v2!))?.id,
      );
  });

  it('every download event of an ingest and a poll carries download_id and infohash, naming the right ones', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger({}, { level: 'debug', write: (line) => lines.push(JSON.parse(line)) });
    const events = (id: string) => lines.filter((l) => String(l.event).startsWith('download_') && l.download_id === id);
    const fields = (id: string) => events(id).map((l) => [l.event, l.download_id, l.infohash]);

    // Create, then the same hash again (dedup).
    const h = v1();
    const created = await ingest(deps(torrents, { log }), { magnet: `magnet:?xt=urn:btih:${h.infohash}&dn=logged` });
    await ingest(deps(torrents, { log }), { infohashes: [h.infohash] });
    const id = created.download.id;
    expect(fields(id)).toEqual([
      ['download_created', id, h.infohash],
      ['download_deduplicated', id, h.infohash],
    ]);

    // A poll: a torrent adopted, then its state followed, then the torrent gone and the download set aside.
    const t = emulator.addTorrent(ours({ kind: 'v1', state: 'downloading' }));
    await reconcile(deps(torrents, { log }));
    const adopted = (await store.findActiveByInfohash(t.infohash_v1!))!.id;
    emulator.update(t.hash, { state: 'pausedDL' });
    await reconcile(deps(torrents, { log }));
    emulator.remove(t.hash);
    const full = client({ fullResyncMs: 0 });
    await reconcile(deps(full, { log, missingGraceMs: 0 }));
    await reconcile(deps(full, { log, missingGraceMs: 0 }));
    expect(fields(adopted)).toEqual([
      ['download_adopted', adopted, t.infohash_v1],
      ['download_state_followed', adopted, t.infohash_v1],
      ['download_missing_in_client', adopted, t.infohash_v1],
    ]);
  });

  it('ingest hands a new download to the client with our category and its id as tag; a refused add leaves it stuck', async () => {
    const h = v1();
    const ok = await ingest(deps(), { magnet: `magnet:?xt=urn:btih:${h.infohash}&dn=ok` });
    expect(ok.download.state).toBe('queued');
    expect(emulator.torrents.get(h.infohash)).toMatchObject({ category: DEFAULT_CATEGORY, tags: ok.download.id });

    emulator.faults.add = 'fail';
    const refused = await ingest(deps(), { infohashes: [v1().infohash] });
    expect(refused).toMatchObject({ created: true, download: { state: 'stuck' } });
  });

  it('retry: rolls back on a real refusal; a torrent still in the client counts as added', async () => {
    const h = v1();
    const { download } = await ingest(deps(), { infohashes: [h.infohash] });
    await store.setDownloadState(download.id, 'queued', 'failed');
    // The torrent is still there: the client answers "duplicate" (Fails. / 409), and that is success.
    expect((await retry(deps(), download.id)).state).toBe('queued');
    await store.setDownloadState(download.id, 'queued', 'failed');
    emulator.clear();
    emulator.faults.add = 'fail';
    await expect(retry(deps(), download.id)).rejects.toBeInstanceOf(TorrentAddRefusedError);
    expect((await store.get(download.id))?.state).toBe('failed');
    expect(await store.findActiveByInfohash(h.infohash)).toBeUndefined();
    emulator.faults.add = 'ok';
    expect((await retry(deps(), download.id)).state).toBe('queued');
    await assertOneActivePerHash(aws, table.name, [h.infohash]);
  });
});

import { DynamoDownloadStore } from '../../lib/downloads/dynamodb-store';
import { reconcile } from '../../lib/downloads/reconcile';
import { retry } from '../../lib/downloads/service';
import { createLogger, silentLogger } from '../../lib/log';
import { DEFAULT_CATEGORY, QBittorrentClient } from '../../lib/torrents/qbittorrent';
import { QbittorrentEmulator } from '../../emulator/qbittorrent/emulator';
import { itemsAbout, v1 } from '../support/downloads';
import { isolatedTable, stackClients } from '../support/stack';

/**
 * A hostile torrent client: whatever it answers, items are built from named,
 * validated fields, keys are ours, and names pass the same rules as names
 * from the API (lib/names). A private table, so "changed no other row" is
 * checkable by scanning it all.
 */
const aws = stackClients();
let table: { name: string; drop: () => Promise<void> };
let store: DynamoDownloadStore;
let emulator: QbittorrentEmulator;
let torrents: QBittorrentClient;
let baseUrl: string;
const deps = () => ({ store, torrents, log: silentLogger });

beforeAll(async () => {
  table = await isolatedTable(aws, 'DownloadsTable');
  store = new DynamoDownloadStore({ documents: aws.documents, table: table.name });
});
afterAll(async () => {
  await table.drop();
  aws.dynamodb.destroy();
});
beforeEach(async () => {
  emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile: '5.2' });
  baseUrl = await emulator.listen();
  torrents = new QBittorrentClient({
    baseUrl,
    auth: { kind: 'password', username: 'admin', password: 'pw' },
  });
});
afterEach(() => emulator.close());

describe('hostile torrents from the client', () => {
  it('a torrent named ../../x is adopted under a safe name, and a retry never sends that name back as dn', async () => {
    const t = emulator.addTorrent({ kind: 'v1', name: '../../x', category: DEFAULT_CATEGORY });
    expect(await reconcile(deps())).toMatchObject({ adopted: 1, failed: 0 });
    const adopted = (await store.findActiveByInfohash(t.infohash_v1!))!;
    expect(adopted.name).toBe(t.infohash_v1);

    await store.setDownloadState(adopted.id, adopted.state, 'failed');
    emulator.clear();
    const sent: string[] = [];
    const spy = new QBittorrentClient({
      baseUrl: `http://127.0.0.1:${new URL(baseUrl).port}`,
      auth: { kind: 'password', username: 'admin', password: 'pw' },
      fetch: async (input, init) => {
        if (String(input).endsWith('/torrents/add')) sent.push(String(init?.body));
        return fetch(input, init);
      },
    });
    await retry({ store, torrents: spy, log: silentLogger }, adopted.id);
    expect(sent).toHaveLength(1);
    const magnet = new URLSearchParams(sent[0]).get('urls')!;
    expect(decodeURIComponent(magnet)).not.toContain('../');
    expect(new URLSearchParams(magnet.replace(/^magnet:\?/, '')).get('dn')).not.toContain('..');
  });

  it('fields named PK, SK, __proto__, entity, download_id change no row they should not', async () => {
    const victim = v1();
    // The bystander's torrent is in the client and unchanged.
    const { download: bystander } = await store.createDownloadIfNoActive(
      { state: 'downloading', name: 'bystander', progress: 0 },
      [victim],
    );
    emulator.addTorrent({
      kind: 'v1',
      infohash_v1: victim.infohash,
      name: 'bystander',
      category: DEFAULT_CATEGORY,
      progress: 0,
    });
    // One poll first: it records when the bystander's metadata arrived; the next has no reason to write it.
    expect(await reconcile(deps())).toMatchObject({ failed: 0 });
    const before = await itemsAbout(aws, table.name, [bystander.id, victim.infohash]);

    const t = emulator.addTorrent({ kind: 'v1', name: 'normal', category: DEFAULT_CATEGORY });
    emulator.update(t.hash, {
      PK: `DL#${bystander.id}`,
      SK: 'META',
      entity: 'guard',
      download_id: bystander.id,
      state: 'downloading',
      revision: 1,
      infohashes: [victim],
      ['__proto__' as string]: { polluted: true },
      constructor: { prototype: { polluted: true } },
    });
    // A new client's first answer is a full one, so the bystander is looked at again.
    const full = new QBittorrentClient({
      baseUrl,
      auth: { kind: 'password', username: 'admin', password: 'pw' },
    });
    expect(await reconcile({ ...deps(), torrents: full })).toMatchObject({ adopted: 1, unchanged: 1, failed: 0 });

    expect(await itemsAbout(aws, table.name, [bystander.id, victim.infohash])).toEqual(before);
    const adopted = (await store.findActiveByInfohash(t.infohash_v1!))!;
    expect(adopted.id).not.toBe(bystander.id);
    expect(adopted.infohashes).toEqual([{ infohash: t.infohash_v1, kind: 'v1' }]);
    const raw = await itemsAbout(aws, table.name, [adopted.id]);
    for (const item of raw) {
      expect(Object.keys(item)).not.toEqual(expect.arrayContaining(['polluted', 'constructor']));
      expect(String(item.PK)).toMatch(/^(DL|IH)#/);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a hash field carrying a key (IH#…|ACTIVE, a path) is not a hash: skipped, nothing written', async () => {
    emulator.addTorrent({ kind: 'legacy', infohash_v1: `IH#${v1().infohash}`, category: DEFAULT_CATEGORY });
    const t = emulator.addTorrent({ kind: 'v1', category: DEFAULT_CATEGORY });
    emulator.update(t.hash, { infohash_v1: '../../etc/passwd', infohash_v2: 'ACTIVE' });
    expect(await reconcile(deps())).toMatchObject({ skipped: 2, adopted: 0, failed: 0 });
  });

  it('ordinary races of the poll log at debug, never at error', async () => {
    const lines: string[] = [];
    const log = createLogger({}, { level: 'debug', write: (l) => lines.push(l) });
    const ts = Array.from({ length: 6 }, () => emulator.addTorrent({ kind: 'hybrid', category: DEFAULT_CATEGORY }));
    const client = () =>
      new QBittorrentClient({
        baseUrl,
        auth: { kind: 'password', username: 'admin', password: 'pw' },
      });
    await Promise.all(Array.from({ length: 4 }, () => reconcile({ store, torrents: client(), log })));
    for (const t of ts)
      expect((await store.findActiveByInfohash(t.infohash_v1!))?.id).toBe(
        (await store.findActiveByInfohash(t.infohash_v2!))?.id,
      );
    expect(lines.map((l) => JSON.parse(l)).filter((l) => l.level === 'error')).toEqual([]);
  });
});

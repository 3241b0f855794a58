import {
  CategoryConflictError,
  type CategoryRecord,
  categoryRecordOf,
  chosenCategory,
  ensureCategory,
  InvalidCategoryError,
  MAX_RECORDED_CATEGORIES,
  parseCategory,
  parseSavePath,
  refreshCategoryRecord,
  rememberCategory,
} from '../../../lib/downloads/category';
import type { Download, NewDownload } from '../../../lib/downloads/model';
import type { Infohash } from '../../../lib/downloads/infohash';
import { ingest, retry } from '../../../lib/downloads/service';
import type { DownloadStore } from '../../../lib/downloads/store';
import { silentLogger } from '../../../lib/log';
import { QBittorrentClient } from '../../../lib/torrents/qbittorrent';
import { QbittorrentEmulator, type Profile, PROFILES } from '../../../emulator/qbittorrent/emulator';

/**
 * Categories of downloads (decisions 458, 459): the default category's tree, names compared exactly as
 * qBittorrent compares them, save paths relative to the client's default save path; against the emulator.
 */
const ROOT = 'torrent-scan-sync';
const V1 = 'c12fe1c06bba254a9dc9f519b335aa7c1367a88a';

describe('parseCategory: a name in the default category tree', () => {
  it.each([
    ROOT,
    `${ROOT}/movies`,
    `${ROOT}/Movies 4K`,
    `${ROOT}/tv/anime/2026`,
    `${ROOT}/constructor`,
    `${ROOT}/a.b-c_d`,
  ])('takes %j as given', (name) => expect(parseCategory(ROOT, name)).toBe(name));

  it.each<[unknown, RegExp]>([
    ['../x', /must be torrent-scan-sync or a sub-category/],
    [`${ROOT}/../x`, /\. or \.\. level/],
    [`${ROOT}/..`, /\. or \.\. level/],
    [`${ROOT}/.`, /\. or \.\. level/],
    [`${ROOT}/a//b`, /empty level/],
    [`${ROOT}/`, /empty level/],
    [`${ROOT}/a/`, /empty level/],
    [`/${ROOT}/a`, /must be torrent-scan-sync or a sub-category/],
    [`Torrent-Scan-Sync/movies`, /this letter case/],
    [`TORRENT-SCAN-SYNC`, /this letter case/],
    [`${ROOT}x/a`, /must be torrent-scan-sync or a sub-category/],
    ['__proto__', /must be torrent-scan-sync or a sub-category/],
    [`${ROOT}/__proto__`, /starting with a letter or digit/],
    ['constructor', /must be torrent-scan-sync or a sub-category/],
    [`${ROOT}/a\uD800`, /only ASCII/],
    [`${ROOT}/\uDC00`, /only ASCII/],
    [`${ROOT}/Фильмы`, /only ASCII/],
    [`${ROOT}/${'a'.repeat(65)}`, /must be 1-64/],
    [`${ROOT}/a/b/c/d`, /at most 3 levels/],
    [`${ROOT}/a\\b`, /must be 1-64/],
    [`${ROOT}/a\u0000`, /only ASCII/],
    [`${ROOT}/a.`, /not ending in a space or dot/],
    [`${ROOT}/a `, /not ending in a space or dot/],
    [`${ROOT}/ a`, /starting with a letter or digit/],
    [`${ROOT}/${'a/'.repeat(200)}`, /longer than/],
    ['', /must be a name/],
    [42, /must be a name/],
    [null, /must be a name/],
    [{ toString: () => ROOT }, /must be a name/],
  ])('refuses %j', (input, reason) => {
    expect(() => parseCategory(ROOT, input)).toThrow(InvalidCategoryError);
    expect(() => parseCategory(ROOT, input)).toThrow(reason);
  });
});

describe('parseSavePath: a folder under the client default save path', () => {
  it.each(['movies', 'Фильмы/4K', 'a b/c-d_e.f'])('takes %j', (path) => expect(parseSavePath(path)).toBe(path));

  it('is NFC (a decomposed name and its composed form are one folder)', () =>
    expect(parseSavePath('Cafe\u0301')).toBe('Caf\u00e9'));

  it.each<[unknown, RegExp]>([
    ['/etc', /must be relative/],
    ['/', /must be relative/],
    ['C:\\Windows', /backslash/],
    ['C:/Windows', /must be relative/],
    ['~/x', /must be relative/],
    ['../x', /\. or \.\. level/],
    ['a/../b', /\. or \.\. level/],
    ['a/./b', /\. or \.\. level/],
    ['a//b', /empty level/],
    ['a/', /empty level/],
    ['a\\..\\b', /backslash/],
    ['a\u0000', /control character/],
    ['a\nb', /control character/],
    ['a\uD800', /lone surrogate/],
    ['1/2/3/4/5/6/7/8/9', /at most 8 levels/],
    ['a'.repeat(513), /longer than 512/],
    [' a', /space/],
    ['a.', /ends with a dot/],
    ['a*b', /one of/],
    ['', /must be a folder/],
    [7, /must be a folder/],
  ])('refuses %j', (input, reason) => {
    expect(() => parseSavePath(input)).toThrow(InvalidCategoryError);
    expect(() => parseSavePath(input)).toThrow(reason);
  });
});

describe('chosenCategory', () => {
  it('is the default (undefined) for none or the root', () => {
    expect(chosenCategory(ROOT, {})).toBeUndefined();
    expect(chosenCategory(ROOT, { category: ROOT })).toBeUndefined();
  });
  it('refuses a save path without a sub-category', () => {
    expect(() => chosenCategory(ROOT, { category_save_path: 'movies' })).toThrow(/is for a new sub-category/);
    expect(() => chosenCategory(ROOT, { category: ROOT, category_save_path: 'movies' })).toThrow(
      /is for a new sub-category/,
    );
  });
  it('names the field refused', () => {
    try {
      chosenCategory(ROOT, { category: `${ROOT}/x`, category_save_path: '/etc' });
      throw new Error('not refused');
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidCategoryError);
      expect((err as InvalidCategoryError).field).toBe('category_save_path');
    }
  });
});

describe.each<Profile>([...PROFILES])('qBittorrent %s: categories in the emulator through the client', (profile) => {
  let emulator: QbittorrentEmulator;
  let client: QBittorrentClient;
  beforeEach(async () => {
    emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile });
    const url = await emulator.listen();
    client = new QBittorrentClient({ baseUrl: url, auth: { kind: 'password', username: 'admin', password: 'pw' } });
  });
  afterEach(() => emulator.close());

  it('creates a new category with its save path, and finds it again', async () => {
    expect(await ensureCategory(client, { name: `${ROOT}/movies`, savePath: 'Movies' })).toBe(true);
    expect(await ensureCategory(client, { name: `${ROOT}/movies`, savePath: 'Movies' })).toBe(false);
    expect(await ensureCategory(client, { name: `${ROOT}/movies` })).toBe(false);
    expect(await client.categories()).toEqual(
      new Map([[`${ROOT}/movies`, { name: `${ROOT}/movies`, savePath: 'Movies' }]]),
    );
  });

  it('two creates of one new category at once: one creates it, both go on, one category', async () => {
    const wanted = { name: `${ROOT}/tv`, savePath: 'TV' };
    const results = await Promise.all([ensureCategory(client, wanted), ensureCategory(client, wanted)]);
    expect(results.sort()).toEqual([false, true]);
    expect([...(await client.categories()).keys()]).toEqual([`${ROOT}/tv`]);
  });

  it('two creates with different save paths at once: the loser is a conflict', async () => {
    const results = await Promise.allSettled([
      ensureCategory(client, { name: `${ROOT}/tv`, savePath: 'A' }),
      ensureCategory(client, { name: `${ROOT}/tv`, savePath: 'B' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(
      CategoryConflictError,
    );
  });

  it('refuses another save path for an existing category, and a name differing only in case', async () => {
    await client.createCategory(`${ROOT}/Movies`, '/srv/films');
    await expect(ensureCategory(client, { name: `${ROOT}/Movies`, savePath: 'films' })).rejects.toThrow(
      /exists with the save path "\/srv\/films"/,
    );
    await expect(ensureCategory(client, { name: `${ROOT}/movies` })).rejects.toThrow(/only in letter case/);
    expect([...(await client.categories()).keys()]).toEqual([`${ROOT}/Movies`]);
  });

  it('takes names that are Object.prototype keys as plain names', async () => {
    for (const name of [`${ROOT}/constructor`, `${ROOT}/toString`, `${ROOT}/hasOwnProperty`])
      expect(await ensureCategory(client, { name })).toBe(true);
    const raw = await fetch(
      `${(client as unknown as { options: { baseUrl: string } }).options.baseUrl}/emulator/categories`,
    );
    expect(Object.keys(((await raw.json()) as { categories: object }).categories).sort()).toEqual([
      `${ROOT}/constructor`,
      `${ROOT}/hasOwnProperty`,
      `${ROOT}/toString`,
    ]);
  });

  it('adds in a sub-category with automatic management (its save path), the default as before', async () => {
    await client.createCategory(`${ROOT}/movies`, 'Movies');
    await client.add(`magnet:?xt=urn:btih:${V1}&dn=a`, { tags: ['t'], category: `${ROOT}/movies` });
    const other = 'd'.repeat(40);
    await client.add(`magnet:?xt=urn:btih:${other}&dn=b`, { tags: ['u'] });
    const byHash = emulator.torrents;
    expect(byHash.get(V1)).toMatchObject({
      category: `${ROOT}/movies`,
      auto_tmm: true,
      save_path: '/downloads/Movies',
    });
    expect(byHash.get(other)).toMatchObject({ category: ROOT, auto_tmm: false, save_path: '/downloads' });
  });

  it('the poll follows the tree only: not a look-alike, another case, another category or none', async () => {
    const inside = [ROOT, `${ROOT}/movies`, `${ROOT}/tv/anime`];
    const outside = [`${ROOT}x`, `${ROOT}-old/a`, 'Torrent-Scan-Sync/movies', `TORRENT-SCAN-SYNC`, 'sonarr', ''];
    for (const category of [...inside, ...outside])
      emulator.addTorrent({ kind: 'v1', category, name: category || 'none' });
    const snapshot = await client.snapshot();
    expect(snapshot.present.map((t) => t.category).sort()).toEqual([...inside].sort());
  });

  it("torrents/info's category filter: sub-categories only when the client has them enabled", async () => {
    emulator.addTorrent({ kind: 'v1', category: `${ROOT}/movies` });
    const cookie = await login(client);
    const count = async () =>
      (
        (await (
          await fetch(`${base(client)}/api/v2/torrents/info?category=${ROOT}`, { headers: { cookie } })
        ).json()) as unknown[]
      ).length;
    expect(await count()).toBe(0);
    emulator.categories.subcategories = true;
    expect(await count()).toBe(1);
  });
});

const base = (client: QBittorrentClient) => (client as unknown as { options: { baseUrl: string } }).options.baseUrl;
async function login(client: QBittorrentClient): Promise<string> {
  const res = await fetch(`${base(client)}/api/v2/auth/login`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: 'pw' }),
  });
  return res.headers.getSetCookie()[0].split(';')[0];
}

describe('ingest and retry with a category (the real client against the emulator, a recording store)', () => {
  let emulator: QbittorrentEmulator;
  let client: QBittorrentClient;
  beforeEach(async () => {
    emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile: '5.2' });
    client = new QBittorrentClient({
      baseUrl: await emulator.listen(),
      auth: { kind: 'password', username: 'admin', password: 'pw' },
    });
  });
  afterEach(() => emulator.close());

  function store(stored?: Partial<Download>) {
    const created: NewDownload[] = [];
    const row = (input: Partial<Download>, hashes: Infohash[]): Download => ({
      id: '01jf0000000000000000000000',
      state: 'queued',
      name: 'x',
      infohashes: hashes,
      created_at: '2026-12-06T00:00:00.000Z',
      updated_at: '2026-12-06T00:00:00.000Z',
      revision: 1,
      ...input,
    });
    const s = {
      createDownloadIfNoActive: async (input: NewDownload, hashes: Infohash[]) => {
        created.push(input);
        return { created: true, download: row(input, hashes) };
      },
      get: async () => (stored ? row(stored, [{ infohash: V1, kind: 'v1' }]) : undefined),
      activateIfNoOtherActive: async () => row({ ...stored, state: 'queued' }, [{ infohash: V1, kind: 'v1' }]),
    } as unknown as DownloadStore;
    return { store: s, created };
  }
  const records = () => {
    let last: CategoryRecord | undefined;
    let writes = 0;
    return {
      record: async (r: CategoryRecord) => {
        last = r;
        writes++;
      },
      read: async () => last,
      get writes() {
        return writes;
      },
    };
  };

  it('creates the category, stores it on the download, adds the torrent in it, records it for the form', async () => {
    const { store: s, created } = store();
    const categoryRecords = records();
    await ingest(
      { store: s, torrents: client, log: silentLogger, categoryRecords },
      { infohashes: [V1], category: `${ROOT}/movies`, category_save_path: 'Movies' },
    );
    expect(created[0].category).toBe(`${ROOT}/movies`);
    expect(emulator.torrents.get(V1)).toMatchObject({ category: `${ROOT}/movies`, save_path: '/downloads/Movies' });
    expect((await categoryRecords.read())?.categories).toEqual([{ name: `${ROOT}/movies`, save_path: 'Movies' }]);
  });

  it('a conflict or a bad name writes nothing and sends nothing', async () => {
    await client.createCategory(`${ROOT}/movies`, 'Films');
    const { store: s, created } = store();
    const deps = { store: s, torrents: client, log: silentLogger };
    await expect(
      ingest(deps, { infohashes: [V1], category: `${ROOT}/movies`, category_save_path: 'Movies' }),
    ).rejects.toThrow(CategoryConflictError);
    await expect(ingest(deps, { infohashes: [V1], category: `../etc` })).rejects.toThrow(InvalidCategoryError);
    await expect(ingest(deps, { infohashes: [V1], category_save_path: 'x' })).rejects.toThrow(InvalidCategoryError);
    expect(created).toEqual([]);
    expect(emulator.torrents.size).toBe(0);
    expect([...(await client.categories()).keys()]).toEqual([`${ROOT}/movies`]);
  });

  it('the default category: no category stored, none created', async () => {
    const { store: s, created } = store();
    await ingest({ store: s, torrents: client, log: silentLogger }, { infohashes: [V1], category: ROOT });
    expect(created[0].category).toBeUndefined();
    expect(emulator.torrents.get(V1)).toMatchObject({ category: ROOT, auto_tmm: false });
    expect([...(await client.categories()).keys()]).toEqual([ROOT]);
  });

  it('a retry re-adds in the same category; one outside the tree today goes to the default', async () => {
    const { store: s } = store({ state: 'failed', category: `${ROOT}/tv` });
    await retry({ store: s, torrents: client, log: silentLogger }, '01jf0000000000000000000000');
    expect(emulator.torrents.get(V1)).toMatchObject({ category: `${ROOT}/tv`, auto_tmm: true });
    emulator.clear();
    const { store: old } = store({ state: 'failed', category: 'old-root/tv' });
    await retry({ store: old, torrents: client, log: silentLogger }, '01jf0000000000000000000000');
    expect(emulator.torrents.get(V1)).toMatchObject({ category: ROOT, auto_tmm: false });
  });

  it('the record: the tree only, in name order, rewritten only on a change', async () => {
    const categoryRecords = records();
    for (const name of [`${ROOT}/b`, 'sonarr', `${ROOT}/a`, `${ROOT}x`]) await client.createCategory(name, '');
    await refreshCategoryRecord(client, categoryRecords, '2026-12-08T00:00:00.000Z');
    await refreshCategoryRecord(client, categoryRecords, '2026-12-08T00:01:00.000Z');
    expect(categoryRecords.writes).toBe(1);
    expect((await categoryRecords.read())?.categories.map((c) => c.name)).toEqual([`${ROOT}/a`, `${ROOT}/b`]);
    await rememberCategory(ROOT, categoryRecords, { name: `${ROOT}/c` }, '2026-12-08T00:02:00.000Z');
    expect((await categoryRecords.read())?.categories.map((c) => c.name)).toEqual([
      `${ROOT}/a`,
      `${ROOT}/b`,
      `${ROOT}/c`,
    ]);
  });

  it('the record is bounded', () => {
    const many = Array.from({ length: MAX_RECORDED_CATEGORIES + 50 }, (_, i) => ({
      name: `${ROOT}/c${String(i).padStart(4, '0')}`,
      savePath: '',
    }));
    expect(categoryRecordOf(ROOT, many, 'now').categories).toHaveLength(MAX_RECORDED_CATEGORIES);
  });
});

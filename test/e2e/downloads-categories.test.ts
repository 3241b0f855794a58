import { randomBytes } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { CATEGORY_RECORD_KEY } from '../../lib/downloads/keys';
import { downloadsStore, itemsAbout, v1 } from '../support/downloads';
import { call, emulatorProfile } from '../support/http';
import { invokeScheduled } from '../support/stack';

/**
 * A category per download (decisions 458, 459), through the API, the stack's emulator and the poll: a download
 * in a sub-category is followed to completion, a torrent outside the default category's tree is never adopted,
 * two adds creating one new category at once both land in it.
 */
const { aws, table } = downloadsStore();
afterAll(() => aws.dynamodb.destroy());

const ROOT = 'torrent-scan-sync';
const emulator = (path: string, init?: RequestInit) => fetch(`${process.env.TORRENT_CLIENT_URL}/emulator${path}`, init);
const unique = () => `c${randomBytes(4).toString('hex')}`;

type EmulatedTorrent = { hash: string; category: string; save_path: string; auto_tmm: boolean; tags: string };
async function torrentOf(hash: string): Promise<EmulatedTorrent | undefined> {
  const all = (await (await emulator('/torrents')).json()) as EmulatedTorrent[];
  return all.find((t) => t.hash === hash);
}
async function poll(): Promise<void> {
  expect((await invokeScheduled('downloadsPoll')).FunctionError).toBeUndefined();
}

describe.each(['4.6', '5.2'])('categories against qBittorrent %s', (profile) => {
  beforeAll(() => emulatorProfile(profile));
  afterAll(() => emulatorProfile('5.1'));

  it('a download in a new sub-category: created with its folder, followed by the poll, completed', async () => {
    const h = v1();
    const category = `${ROOT}/${unique()}`;
    const created = await call('POST', '/downloads', {
      infohashes: [h.infohash],
      name: 'Sintel',
      category,
      category_save_path: 'Films/Sintel',
    });
    expect(created.status).toBe(201);
    expect(created.body.category).toBe(category);
    expect(await torrentOf(h.infohash)).toMatchObject({
      category,
      auto_tmm: true,
      save_path: '/downloads/Films/Sintel',
      tags: created.body.id,
    });
    await emulator(`/torrents/${h.infohash}`, {
      method: 'PATCH',
      body: JSON.stringify({ state: 'uploading', progress: 1 }),
    });
    await poll();
    const done = await call('GET', `/downloads/${created.body.id}`);
    expect(done.body).toMatchObject({ state: 'completed', category, progress: 1 });
  });

  it('a torrent outside the tree is never adopted: another category, a look-alike, another letter case, none', async () => {
    const hashes: string[] = [];
    for (const category of [
      'sonarr',
      `${ROOT}x/a`,
      `${ROOT}-old`,
      `Torrent-Scan-Sync/${unique()}`,
      'TORRENT-SCAN-SYNC',
      '',
    ]) {
      const res = await emulator('/torrents', { method: 'POST', body: JSON.stringify({ kind: 'v1', category }) });
      hashes.push(((await res.json()) as { hash: string }).hash);
    }
    const inside = (await (
      await emulator('/torrents', {
        method: 'POST',
        body: JSON.stringify({ kind: 'v1', category: `${ROOT}/${unique()}` }),
      })
    ).json()) as { hash: string };
    // Twice: a full update and a delta.
    await poll();
    await poll();
    for (const hash of hashes) expect((await call('GET', `/downloads?q=${hash}`)).body.items).toEqual([]);
    expect((await call('GET', `/downloads?q=${inside.hash}`)).body.items).toHaveLength(1);
  });

  it('two adds creating one new category at once: both in it, one category in the client, recorded for the form', async () => {
    const category = `${ROOT}/${unique()}`;
    const [a, b] = [v1(), v1()];
    const answers = await Promise.all(
      [a, b].map((h) =>
        call('POST', '/downloads', { infohashes: [h.infohash], category, category_save_path: 'Shared' }),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual([201, 201]);
    for (const h of [a, b]) expect((await torrentOf(h.infohash))?.category).toBe(category);
    const listed = (await (await emulator('/categories')).json()) as { categories: Record<string, string> };
    expect(Object.entries(listed.categories).filter(([name]) => name === category)).toEqual([[category, 'Shared']]);
    const { Item } = await aws.documents.send(new GetCommand({ TableName: table, Key: CATEGORY_RECORD_KEY }));
    expect(Item?.categories).toContainEqual({ name: category, save_path: 'Shared' });
  });

  it('refuses a hostile name or folder (400) and another folder for an existing category (409), writing nothing', async () => {
    const category = `${ROOT}/${unique()}`;
    expect(
      (await call('POST', '/downloads', { infohashes: [v1().infohash], category, category_save_path: 'A' })).status,
    ).toBe(201);
    const h = v1();
    for (const [body, status, code] of [
      [{ category: '../etc' }, 400, 'INVALID_CATEGORY'],
      [{ category: `${ROOT}/a//b` }, 400, 'INVALID_CATEGORY'],
      [{ category: `Torrent-Scan-Sync/x` }, 400, 'INVALID_CATEGORY'],
      [{ category: `${ROOT}/x`, category_save_path: '/etc' }, 400, 'INVALID_CATEGORY'],
      [{ category: `${ROOT}/x`, category_save_path: '../../root' }, 400, 'INVALID_CATEGORY'],
      [{ category_save_path: 'x' }, 400, 'INVALID_CATEGORY'],
      [{ category: '' }, 400, 'INVALID_REQUEST'],
      [{ category: 7 }, 400, 'INVALID_REQUEST'],
      [{ category, category_save_path: 'B' }, 409, 'CATEGORY_CONFLICT'],
      [{ category: category.toUpperCase().replace(ROOT.toUpperCase(), ROOT) }, 409, 'CATEGORY_CONFLICT'],
    ] as const) {
      const answer = await call('POST', '/downloads', { infohashes: [h.infohash], ...body });
      expect([answer.status, answer.body.error?.code]).toEqual([status, code]);
    }
    expect(await itemsAbout(aws, table, [h.infohash])).toEqual([]);
    expect(await torrentOf(h.infohash)).toBeUndefined();
  });

  it('a retry re-adds in the same category', async () => {
    const h = v1();
    const category = `${ROOT}/${unique()}`;
    const created = await call('POST', '/downloads', { infohashes: [h.infohash], category });
    expect((await call('POST', `/downloads/${created.body.id}/state`, { state: 'cancelled' })).status).toBe(200);
    expect(await torrentOf(h.infohash)).toBeUndefined();
    expect((await call('POST', `/downloads/${created.body.id}/retry`)).status).toBe(200);
    expect(await torrentOf(h.infohash)).toMatchObject({ category, auto_tmm: true });
  });
});

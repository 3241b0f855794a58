import { randomBytes } from 'node:crypto';
import { importLegacyDownloads } from '../../lib/downloads/legacy';
import { idTime } from '../../lib/ident';
import { openLegacyFile } from '../../tools/cli/legacy-sqlite';
import { downloadsStore } from '../support/downloads';
import { call } from '../support/http';
import { legacyFile, sqliteTime } from '../support/legacy';

/**
 * After a legacy import, the API serves the imported downloads as its own:
 * newest first by their old `created_at`, dedup of an ingest onto an imported
 * active download, and old numeric URLs answering 404.
 */
const { aws, store } = downloadsStore();
afterAll(() => aws.dynamodb.destroy());

it('lists imported downloads newest first, dedups an ingest of an imported active hash, and answers 404 to numeric ids', async () => {
  const tag = `lg${randomBytes(4).toString('hex')}x`;
  // Old ids from a range no other test uses: the stack's table is shared and legacy ids are per table.
  const firstId = 10 ** 12 + Math.floor(Math.random() * 10 ** 9) * 100;
  const now = Math.floor(Date.now() / 1000) * 1000;
  const active = randomBytes(20).toString('hex');
  const rows = Array.from({ length: 9 }, (_, i) => ({
    id: firstId + i,
    infohash: i === 4 ? active : randomBytes(20).toString('hex'),
    state: i === 4 ? 'downloading' : 'completed',
    name: `Légende ${tag} №${i} 🎬`,
    // Three rows to a second: order within a second comes from the old ids.
    created_at: sqliteTime(now - 60_000 + Math.floor(i / 3) * 1000),
  }));
  const { file, remove } = legacyFile(rows);
  const legacy = openLegacyFile(file);
  let ids: Record<string, string>;
  try {
    const report = await importLegacyDownloads(legacy.rows(), { store });
    expect(report.summary).toMatchObject({ imported: 9, bad_rows: 0, conflicts: 0 });
    ids = report.ids;
  } finally {
    legacy.close();
    remove();
  }

  const listed: Array<{ id: string; name: string; created_at: string }> = [];
  let cursor: string | undefined;
  do {
    const page = await call(
      'GET',
      `/downloads?q=${encodeURIComponent(`légende ${tag}`)}&limit=4${cursor ? `&cursor=${cursor}` : ''}`,
    );
    expect(page.status).toBe(200);
    listed.push(...page.body.items);
    cursor = page.body.cursor;
  } while (cursor);
  const newestFirst = rows.map((r) => ids[String(r.id)]).reverse();
  expect(listed.map((d) => d.id)).toEqual(newestFirst);
  expect(listed[0]).toMatchObject({ name: `Légende ${tag} №8 🎬`, created_at: new Date(now - 58_000).toISOString() });
  for (const d of listed) expect(idTime(d.id)).toBe(Date.parse(d.created_at));

  const again = await call('POST', '/downloads', { infohashes: [active.toUpperCase()] });
  expect(again.status).toBe(200);
  expect(again.body).toMatchObject({ id: ids[String(firstId + 4)], state: 'downloading' });

  for (const numeric of [String(firstId), '1', '42']) {
    const old = await call('GET', `/downloads/${numeric}`);
    expect(old.status).toBe(404);
  }
});

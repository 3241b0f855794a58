import { importLegacyDownloads, LegacyRow, mapLegacyRow, parseLegacyTime } from '../../../lib/downloads/legacy';
import type { Download } from '../../../lib/downloads/model';
import type { LegacyImportOutcome } from '../../../lib/downloads/store';
import { idTime } from '../../../lib/ident';

const H = 'c12fe1c06bba254a9dc9f519b335aa7c1367a88a';

describe('parseLegacyTime', () => {
  it.each([
    ['2021-06-01 12:00:00', Date.UTC(2021, 5, 1, 12)],
    ['2021-06-01T12:00:00Z', Date.UTC(2021, 5, 1, 12)],
    ['2021-06-01 12:00:00.250', Date.UTC(2021, 5, 1, 12) + 250],
    ['1970-01-01 00:00:00', 0],
  ])('%s is UTC', (text, ms) => expect(parseLegacyTime(text)).toBe(ms));

  it.each([
    ['2021-02-30 10:00:00'],
    ['2021-06-01 24:00:00'],
    ['2021-06-01'],
    ['yesterday'],
    [''],
    [null],
    [1622548800],
    ['1969-12-31 23:59:59'],
    ['2021-06-01 12:00:00+02:00'],
  ])('%p is not a time', (value) => expect(parseLegacyTime(value)).toBeUndefined());
});

describe('mapLegacyRow', () => {
  const row = (r: Partial<LegacyRow>): LegacyRow => ({ id: 1n, infohash: H, state: 'queued', ...r });

  it('lowercases the hash, takes the kind from the length, converts base32', () => {
    expect(mapLegacyRow(row({ infohash: H.toUpperCase() }))).toMatchObject({
      ok: true,
      hash: { infohash: H, kind: 'v1' },
    });
    expect(mapLegacyRow(row({ infohash: 'a'.repeat(64) }))).toMatchObject({ ok: true, hash: { kind: 'v2' } });
    expect(mapLegacyRow(row({ infohash: 'YEX6DQDLXPELUNO4BJ5G4J5GFZLYXA5D' }))).toMatchObject({
      ok: true,
      hash: { infohash: expect.stringMatching(/^[0-9a-f]{40}$/), kind: 'v1' },
    });
  });

  it.each([
    [{ id: null }, 'NULL id'],
    [{ id: 0n }, 'id is not a positive integer: 0'],
    [{ id: -4n }, 'id is not a positive integer: -4'],
    [{ id: 2.5 }, 'id is not a positive integer: 2.5'],
    [{ id: '7' }, 'id is not a positive integer: "7"'],
    [{ infohash: null }, 'no infohash'],
    [{ infohash: 'zz' }, expect.stringMatching(/^invalid infohash "zz"/)],
    [{ state: 'Seeding' }, 'unknown state "Seeding"'],
    [{ state: undefined }, 'no state'],
  ])('refuses %p', (patch, reason) =>
    expect(mapLegacyRow(row(patch as Partial<LegacyRow>))).toMatchObject({ ok: false, reason }),
  );

  it('keeps a 64-bit id exact', () => {
    expect(mapLegacyRow(row({ id: 9223372036854775807n }))).toMatchObject({
      ok: true,
      legacyId: '9223372036854775807',
    });
  });

  it('names a download after its hash when the legacy name is missing or unsafe, with a warning for the unsafe one', () => {
    expect(mapLegacyRow(row({ name: null }))).toMatchObject({
      ok: true,
      name: H,
      warnings: [expect.stringMatching(/created_at/)],
    });
    expect(mapLegacyRow(row({ name: '../etc', created_at: '2021-01-01 00:00:00' }))).toMatchObject({
      ok: true,
      name: H,
      warnings: [expect.stringMatching(/name "..\/etc" refused/)],
    });
    expect(mapLegacyRow(row({ name: '  Ünïcödé 🎬 ', created_at: '2021-01-01 00:00:00' }))).toMatchObject({
      ok: true,
      name: 'Ünïcödé 🎬',
      warnings: [],
    });
  });
});

/** An in-memory store that records the order writes reach each hash. */
function memoryStore(delayMs: (legacyId: string) => number) {
  const guards = new Map<string, string>();
  const legacy = new Map<string, string>();
  const writes: string[] = [];
  const store = {
    async importDownloadIfNoActive(d: Download, legacyId: string): Promise<LegacyImportOutcome> {
      await new Promise((r) => setTimeout(r, delayMs(legacyId)));
      writes.push(legacyId);
      if (legacy.has(legacyId)) return { outcome: 'already', id: legacy.get(legacyId)! };
      legacy.set(legacyId, d.id);
      const h = d.infohashes[0].infohash;
      if (['queued', 'downloading', 'paused', 'stuck'].includes(d.state)) {
        if (guards.has(h))
          return { outcome: 'conflict', download: { ...d, state: 'failed' }, infohash: h, ownerId: guards.get(h)! };
        guards.set(h, d.id);
      }
      return { outcome: 'imported', download: d };
    },
    async importDownloadsIfNoActive(
      rows: Array<{ download: Download; legacyId: string }>,
    ): Promise<LegacyImportOutcome[]> {
      return Promise.all(rows.map((r) => store.importDownloadIfNoActive(r.download, r.legacyId)));
    },
    legacyImports: async () => new Map(legacy),
    legacyImportTime: async (now: number) => now,
    findActiveByInfohash: async () => undefined,
  };
  return { writes, guards, store };
}

describe('importLegacyDownloads', () => {
  it('writes the rows of one hash in old-id order even when the older write is the slow one', async () => {
    const rows: LegacyRow[] = Array.from({ length: 30 }, (_, i) => ({
      id: BigInt(i + 1),
      infohash: i % 3 === 0 ? H : `${i}`.padStart(40, 'a'),
      state: 'queued',
      created_at: '2021-01-01 00:00:00',
    }));
    const mem = memoryStore((id) => (id === '1' ? 50 : 1));
    const report = await importLegacyDownloads(rows, { store: mem.store, concurrency: 8, batchRows: 4 });
    expect(mem.writes.filter((id) => (Number(id) - 1) % 3 === 0)).toEqual([
      '1',
      '4',
      '7',
      '10',
      '13',
      '16',
      '19',
      '22',
      '25',
      '28',
    ]);
    expect(report.conflicts.map((c) => c.owner_legacy_id)).toEqual(Array(9).fill('1'));
    expect(mem.guards.get(H)).toBe(report.ids['1']);
  });

  it('never has more batches in flight, or rows in a batch, than asked, and reports progress for every row', async () => {
    let inFlight = 0;
    let peak = 0;
    const sizes: number[] = [];
    const mem = memoryStore(() => 2);
    const write = mem.store.importDownloadsIfNoActive;
    mem.store.importDownloadsIfNoActive = async (rows) => {
      peak = Math.max(peak, ++inFlight);
      sizes.push(rows.length);
      try {
        return await write(rows);
      } finally {
        inFlight--;
      }
    };
    const progress: number[] = [];
    const rows: LegacyRow[] = Array.from({ length: 50 }, (_, i) => ({
      id: BigInt(i + 1),
      infohash: `${i}`.padStart(40, 'b'),
      state: i === 7 ? 'bogus' : 'completed',
    }));
    const report = await importLegacyDownloads(rows, {
      store: mem.store,
      concurrency: 2,
      batchRows: 5,
      onProgress: (n) => progress.push(n),
      now: () => 86_400_000,
    });
    expect(peak).toBe(2);
    expect(Math.max(...sizes)).toBe(5);
    expect(progress.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    expect(report.summary).toMatchObject({ rows: 50, imported: 49, bad_rows: 1 });
    for (const id of Object.values(report.ids)) expect(idTime(id)).toBe(86_400_000);
  });

  it('reports a failed write and goes on', async () => {
    const mem = memoryStore(() => 0);
    const write = mem.store.importDownloadIfNoActive;
    mem.store.importDownloadIfNoActive = async (d, id) => {
      if (id === '2') throw new Error('connection reset');
      return write(d, id);
    };
    const rows: LegacyRow[] = [1n, 2n, 3n].map((id) => ({
      id,
      infohash: `${id}`.padStart(40, 'c'),
      state: 'completed',
    }));
    const report = await importLegacyDownloads(rows, { store: mem.store, batchRows: 1 });
    expect(report.summary).toMatchObject({ imported: 2, errors: 1 });
    expect(report.errors).toEqual([{ legacy_id: '2', id: expect.any(String), reason: 'connection reset' }]);
  });

  it('a re-run after a partial import mints the ids the first run planned: rows of one second stay in old-id order', async () => {
    const rows: LegacyRow[] = Array.from({ length: 60 }, (_, i) => ({
      id: BigInt(i + 1),
      infohash: `${i}`.padStart(40, 'd'),
      state: 'completed',
      created_at: `2021-01-01 00:00:0${Math.floor(i / 12)}`,
    }));
    const mem = memoryStore(() => 0);
    const write = mem.store.importDownloadsIfNoActive;
    let batch = 0;
    // The first run loses every other batch (a crash would lose the tail; this loses the middle too).
    mem.store.importDownloadsIfNoActive = async (r) => {
      if (batch++ % 2 === 0) throw new Error('killed');
      return write(r);
    };
    const first = await importLegacyDownloads(rows, { store: mem.store, batchRows: 5, concurrency: 1 });
    expect(first.summary.errors).toBe(30);
    mem.store.importDownloadsIfNoActive = write;
    const second = await importLegacyDownloads(rows, { store: mem.store, batchRows: 5 });
    expect(second.summary).toMatchObject({ imported: 30, already_there: 30 });
    const ids = rows.map((r) => second.ids[String(r.id)]);
    expect([...ids].sort()).toEqual(ids);
  });
});

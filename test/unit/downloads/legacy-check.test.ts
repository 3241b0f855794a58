import { importLegacyDownloads, LegacyRow } from '../../../lib/downloads/legacy';
import { checkLegacyImport, LegacyCheckReport } from '../../../lib/downloads/legacy-check';
import { Download, isActive } from '../../../lib/downloads/model';
import type { LegacyImportOutcome } from '../../../lib/downloads/store';

/**
 * The closing check over an in-memory table that keeps the store's rules
 * (guard per active hash, legacy id once, revision bumped by every write):
 * a clean import passes, conflicts and the service's later moves are
 * explained, and each way the table can disagree with the file is named.
 */
const hash = (n: number) => n.toString(16).padStart(40, '0');
const at = (s: number) => `2021-06-01 12:00:${String(s).padStart(2, '0')}`;

function memoryTable() {
  const downloads = new Map<string, Download>();
  const legacy = new Map<string, string>();
  const guards = new Map<string, string>();
  const members = new Map<string, Set<string>>();
  const write = (d: Download, legacyId: string) => {
    legacy.set(legacyId, d.id);
    downloads.set(d.id, d);
    for (const { infohash } of d.infohashes) {
      members.set(infohash, (members.get(infohash) ?? new Set()).add(d.id));
      if (isActive(d.state)) guards.set(infohash, d.id);
    }
  };
  const importOne = async (d: Download, legacyId: string): Promise<LegacyImportOutcome> => {
    if (legacy.has(legacyId)) return { outcome: 'already', id: legacy.get(legacyId)! };
    const taken = isActive(d.state) ? d.infohashes.find((h) => guards.has(h.infohash)) : undefined;
    if (!taken) {
      write(d, legacyId);
      return { outcome: 'imported', download: d };
    }
    const failed: Download = { ...d, state: 'failed' };
    write(failed, legacyId);
    return { outcome: 'conflict', download: failed, infohash: taken.infohash, ownerId: guards.get(taken.infohash)! };
  };
  const store = {
    importDownloadIfNoActive: importOne,
    async importDownloadsIfNoActive(rows: Array<{ download: Download; legacyId: string }>) {
      const out: LegacyImportOutcome[] = [];
      for (const r of rows) out.push(await importOne(r.download, r.legacyId));
      return out;
    },
    legacyImports: async () => new Map(legacy),
    legacyImportTime: async (now: number) => now,
    findActiveByInfohash: async (h: string) => (guards.has(h) ? downloads.get(guards.get(h)!) : undefined),
    downloadsById: async (ids: string[]) =>
      new Map(ids.flatMap((id) => (downloads.has(id) ? [[id, structuredClone(downloads.get(id)!)] as const] : []))),
    guardsOf: jest.fn(
      async (hashes: string[]) => new Map(hashes.flatMap((h) => (guards.has(h) ? [[h, guards.get(h)!] as const] : []))),
    ),
    membersOf: jest.fn(async (hashes: string[]) => new Map(hashes.map((h) => [h, [...(members.get(h) ?? [])]]))),
  };
  return { store, downloads, legacy, guards, members };
}

/** Old ids 1..7: two active rows share hash 4 (the younger becomes a conflict); 8 is a bad row, 9 repeats 1. */
const ROWS: LegacyRow[] = [
  { id: 1n, infohash: hash(1), state: 'completed', name: 'one', created_at: at(1) },
  { id: 2n, infohash: hash(2), state: 'downloading', name: 'two', created_at: at(2) },
  { id: 3n, infohash: hash(3), state: 'queued', name: 'three', created_at: at(2) },
  { id: 4n, infohash: hash(4), state: 'paused', name: 'four', created_at: 'yesterday' },
  { id: 5n, infohash: hash(4), state: 'stuck', name: 'five', created_at: at(5) },
  { id: 6n, infohash: hash(6), state: 'cancelled', name: 'a/b', created_at: at(6) },
  { id: 7n, infohash: hash(7), state: 'failed', created_at: at(7) },
  { id: 8n, infohash: 'xyz', state: 'completed' },
  { id: 1n, infohash: hash(9), state: 'queued' },
];

async function imported() {
  const table = memoryTable();
  const report = await importLegacyDownloads(ROWS, { store: table.store });
  expect(report.summary).toMatchObject({ imported: 7, conflicts: 1, bad_rows: 2, errors: 0 });
  return { ...table, ids: report.ids };
}

const kinds = (check: LegacyCheckReport) => check.problems.map((p) => p.kind).sort();

it('passes a clean import: per state, the file against the table, the conflict explained', async () => {
  const table = await imported();
  const check = await checkLegacyImport(ROWS, table.store);
  expect(check).toMatchObject({ ok: true, rows: 9, expected: 7, found: 7, conflicts: 1, changed: 0, problems: [] });
  expect(check.checked_hashes).toBe(3); // hashes 2, 3 and 4: active rows, guards
  expect(table.store.guardsOf.mock.calls[0][0]).toHaveLength(6); // every hash of the file's good rows
  expect(check.states).toEqual([
    { state: 'queued', file: 1, table: 1, conflicts: 0, changed: 0, unexplained: 0 },
    { state: 'downloading', file: 1, table: 1, conflicts: 0, changed: 0, unexplained: 0 },
    { state: 'paused', file: 1, table: 1, conflicts: 0, changed: 0, unexplained: 0 },
    { state: 'stuck', file: 1, table: 0, conflicts: -1, changed: 0, unexplained: 0 },
    { state: 'completed', file: 1, table: 1, conflicts: 0, changed: 0, unexplained: 0 },
    { state: 'failed', file: 1, table: 2, conflicts: 1, changed: 0, unexplained: 0 },
    { state: 'cancelled', file: 1, table: 1, conflicts: 0, changed: 0, unexplained: 0 },
  ]);
});

it("counts the service's moves since the import as changes, not problems", async () => {
  const { store, downloads, guards, ids } = await imported();
  // The poll completed download 2: a new revision, its guard released in the same write.
  downloads.set(ids['2'], { ...downloads.get(ids['2'])!, state: 'completed', revision: 2 });
  guards.delete(hash(2));
  const check = await checkLegacyImport(ROWS, store);
  expect(check).toMatchObject({ ok: true, changed: 1, conflicts: 1 });
  expect(check.states.find((s) => s.state === 'downloading')).toMatchObject({ file: 1, table: 0, changed: -1 });
  expect(check.states.find((s) => s.state === 'completed')).toMatchObject({ file: 1, table: 2, changed: 1 });
});

type Table = Awaited<ReturnType<typeof imported>>;
const plants: Array<[string, (t: Table) => void, string[], RegExp]> = [
  [
    'a legacy-id item deleted',
    (t) => t.legacy.delete('6'),
    ['not-imported'],
    /legacy id 6 \(cancelled\) was not imported: no legacy-id item/,
  ],
  [
    'a download deleted',
    (t) => t.downloads.delete(t.ids['1']),
    ['no-download'],
    /legacy id 1 maps to \w{26}, which is not in the table/,
  ],
  [
    'a state rewritten behind the store (revision still 1)',
    (t) => t.downloads.set(t.ids['7'], { ...t.downloads.get(t.ids['7'])!, state: 'completed' }),
    ['altered'],
    /legacy id 7 → \w{26}, unchanged since the import \(revision 1\), differs from its row: state failed in the file, completed in the table/,
  ],
  [
    'a name and a hash rewritten',
    (t) =>
      t.downloads.set(t.ids['1'], {
        ...t.downloads.get(t.ids['1'])!,
        name: 'other',
        infohashes: [{ infohash: hash(99), kind: 'v1' }],
      }),
    ['altered'],
    /name "one" in the file, "other" in the table; infohash 0+1 in the file, 0+63 in the table/,
  ],
  [
    'a download edited into something that is not one',
    (t) =>
      t.downloads.set(t.ids['3'], {
        ...t.downloads.get(t.ids['3'])!,
        state: 'seeding' as never,
        infohashes: 7 as never,
      }),
    ['altered', 'stale-guard'],
    /legacy id 3 → \w{26} is not a well-formed download: state "seeding"(.|\n)*the guard names \w{26} \(legacy id 3\), which is not a download in the table/,
  ],
  [
    'a legacy-id item pointed at another download',
    (t) => t.legacy.set('1', t.ids['7']),
    ['altered', 'shared-download'],
    /legacy ids 1 and 7 both map to download|legacy ids 7 and 1 both map to download/,
  ],
  [
    'a legacy id the file does not have',
    (t) => t.legacy.set('12', t.ids['7']),
    ['not-in-file', 'shared-download'],
    /legacy id 12 → \w{26} is in the table but is not a good row of this file/,
  ],
  [
    'an active guard deleted',
    (t) => t.guards.delete(hash(3)),
    ['no-guard'],
    /infohash 0+3: active download \w{26} \(legacy id 3\) holds it without a guard/,
  ],
  [
    'a second active download on an imported hash, written behind the guard',
    (t) => {
      const intruder: Download = { ...t.downloads.get(t.ids['2'])!, id: '01kb0000000000000000000000', name: 'x' };
      t.downloads.set(intruder.id, intruder);
      t.members.get(hash(2))!.add(intruder.id);
    },
    ['two-active'],
    /infohash 0+2: 2 active downloads: \w{26} \(legacy id 2\) downloading, 01kb0{22} downloading/,
  ],
  [
    'the conflict row made active again behind the store',
    (t) => t.downloads.set(t.ids['5'], { ...t.downloads.get(t.ids['5'])!, state: 'stuck' }),
    ['two-active'],
    /infohash 0+4: 2 active downloads: .*\(legacy id 5\) stuck, .*\(legacy id 4\) paused/, // by id: 4's time is the import's
  ],
  [
    'a guard left on a download that finished in the file',
    (t) => t.guards.set(hash(7), t.ids['7']),
    ['stale-guard'],
    /infohash 0+7: the guard names \w{26} \(legacy id 7\), which is failed: new downloads of this hash would be refused/,
  ],
  [
    'a guard naming a download that does not exist',
    (t) => t.guards.set(hash(1), '01kb0000000000000000000000'),
    ['stale-guard'],
    /infohash 0+1: the guard names 01kb0{22}, which is not a download in the table/,
  ],
  [
    'a guard moved to the wrong download',
    (t) => t.guards.set(hash(3), t.ids['1']),
    ['guard-elsewhere'],
    /infohash 0+3: the guard names \w{26} \(legacy id 1\), but the active download is \w{26} \(legacy id 3\)/,
  ],
  [
    'a guard kept by a download the service finished',
    (t) => t.downloads.set(t.ids['2'], { ...t.downloads.get(t.ids['2'])!, state: 'completed', revision: 3 }),
    ['stale-guard'],
    /infohash 0+2: the guard names \w{26} \(legacy id 2\), which is completed: new downloads of this hash would be refused/,
  ],
  [
    'a membership item deleted',
    (t) => t.members.get(hash(2))!.clear(),
    ['no-membership'],
    /infohash 0+2: active download \w{26} \(legacy id 2\) holds it without a membership item/,
  ],
];

it.each(plants)('fails and says what: %s', async (_, plant, expected, detail) => {
  const table = await imported();
  plant(table);
  const check = await checkLegacyImport(ROWS, table.store);
  expect(kinds(check)).toEqual(expected);
  expect(check.ok).toBe(expected.length === 0);
  expect(check.problems.map((p) => p.detail).join('\n')).toMatch(detail);
  if (expected.includes('not-imported') || expected.includes('no-download'))
    expect(check.states.reduce((n, s) => n + s.unexplained, 0)).toBe(-1);
});

it('reads a hash that looked wrong once more, and reports only what is still wrong', async () => {
  const table = await imported();
  const honest = table.store.guardsOf.getMockImplementation()!;
  // The first read of hash 3's guard catches it mid-move (as a concurrent write could show it).
  table.store.guardsOf.mockImplementationOnce(async (hashes) => {
    const guards = await honest(hashes);
    guards.delete(hash(3));
    return guards;
  });
  const check = await checkLegacyImport(ROWS, table.store);
  expect(check.problems).toEqual([]);
  expect(table.store.guardsOf).toHaveBeenCalledTimes(2);
  expect(table.store.guardsOf.mock.calls[1][0]).toEqual([hash(3)]);
  expect(table.store.membersOf.mock.calls[1][0]).toEqual([hash(3)]);
});

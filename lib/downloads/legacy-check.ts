import { isoTime } from '../clock';
import { idTime } from '../ident';
import { LegacyRow, mapLegacyRow, MappedRow } from './legacy';
import { Download, DOWNLOAD_STATES, DownloadState, isActive, isDownloadState } from './model';
import type { LegacyCheckStore } from './store';

/**
 * The legacy import's closing consistency check: the file against the table
 * as it is once the import is over, from reads alone.
 *
 * - every good row of the file (bad rows and repeated ids are not expected)
 *   has its legacy-id item, and that item's download exists;
 * - a download nobody changed since the import (revision 1: every write bumps
 *   it) is still what its row made: the row's state (an active row that lost
 *   its hash to an older owner arrives `failed`: a conflict), name, hash and
 *   time; one the service changed since counts as such, never as a problem;
 * - no download is the target of two legacy ids, and the table holds no
 *   legacy id the file does not have as a good row (one installation per table);
 * - every hash an active row or an active imported download has: at most one
 *   active download holds it, its guard names that one (no guard when none is
 *   active), and it has its membership item.
 *
 * Per state, the file's count against the table's, the difference split into
 * conflicts, changes since the import and what nothing explains. Hash
 * problems are read twice before they are reported: a download the service
 * moves between two reads must not fail the check.
 */

export type LegacyProblemKind =
  | 'not-imported'
  | 'no-download'
  | 'altered'
  | 'shared-download'
  | 'not-in-file'
  | 'two-active'
  | 'no-guard'
  | 'guard-elsewhere'
  | 'stale-guard'
  | 'no-membership';

export interface LegacyProblem {
  kind: LegacyProblemKind;
  legacy_id?: string;
  id?: string;
  infohash?: string;
  detail: string;
}

export interface LegacyStateCount {
  state: DownloadState;
  /** Good rows of the file in this state. */
  file: number;
  /** Their downloads now in this state. */
  table: number;
  /** Active rows imported `failed` because an older download holds the hash. */
  conflicts: number;
  /** Moves by the service since the import (the download's revision is past 1). */
  changed: number;
  /** What neither explains: rows not in the table, downloads altered behind the store. */
  unexplained: number;
}

export interface LegacyCheckReport {
  ok: boolean;
  rows: number;
  /** Good rows: those the table must hold. */
  expected: number;
  /** Good rows whose legacy-id item and download were found. */
  found: number;
  conflicts: number;
  changed: number;
  /** Hashes whose holders were checked (those of active rows or downloads, and those with a guard). */
  checked_hashes: number;
  states: LegacyStateCount[];
  problems: LegacyProblem[];
}

type Good = Extract<MappedRow, { ok: true }>;

export async function checkLegacyImport(
  rows: Iterable<LegacyRow>,
  store: LegacyCheckStore,
): Promise<LegacyCheckReport> {
  // The rows the import would import, decided by the same mapping (the first of a repeated id).
  const good = new Map<string, Good>();
  let total = 0;
  for (const row of rows) {
    total++;
    const mapped = mapLegacyRow(row);
    if (mapped.ok && !good.has(mapped.legacyId)) good.set(mapped.legacyId, mapped);
  }
  const imports = await store.legacyImports();
  // An item edited behind the store may not be a download any more: it is named, never trusted (or a crash).
  const read = await store.downloadsById([...new Set(imports.values())]);
  const malformed = new Map([...read].flatMap(([id, d]) => (flaw(d) ? [[id, flaw(d)!] as const] : [])));
  const downloads = new Map([...read].filter(([id]) => !malformed.has(id)));
  const problems: LegacyProblem[] = [];
  const legacyOf = new Map<string, string>();
  const counts = new Map(DOWNLOAD_STATES.map((s) => [s, { file: 0, table: 0, conflicts: 0, changed: 0 }]));
  let found = 0;
  let conflicts = 0;
  let changed = 0;

  for (const [legacyId, id] of imports) {
    const other = legacyOf.get(id);
    if (other)
      problems.push({
        kind: 'shared-download',
        legacy_id: legacyId,
        id,
        detail: `legacy ids ${other} and ${legacyId} both map to download ${id}`,
      });
    else legacyOf.set(id, legacyId);
    if (!good.has(legacyId))
      problems.push({
        kind: 'not-in-file',
        legacy_id: legacyId,
        id,
        detail: `legacy id ${legacyId} → ${id} is in the table but is not a good row of this file (another installation's import, or a row changed since)`,
      });
  }

  for (const row of good.values()) {
    const count = counts.get(row.state)!;
    count.file++;
    const id = imports.get(row.legacyId);
    if (!id) {
      problems.push({
        kind: 'not-imported',
        legacy_id: row.legacyId,
        detail: `legacy id ${row.legacyId} (${row.state}) was not imported: no legacy-id item (a re-run imports it)`,
      });
      continue;
    }
    if (malformed.has(id)) {
      problems.push({
        kind: 'altered',
        legacy_id: row.legacyId,
        id,
        detail: `legacy id ${row.legacyId} → ${id} is not a well-formed download: ${malformed.get(id)}`,
      });
      continue;
    }
    const d = downloads.get(id);
    if (!d) {
      problems.push({
        kind: 'no-download',
        legacy_id: row.legacyId,
        id,
        detail: `legacy id ${row.legacyId} maps to ${id}, which is not in the table`,
      });
      continue;
    }
    found++;
    counts.get(d.state)!.table++;
    if (d.revision !== 1) {
      if (d.state !== row.state) {
        changed++;
        count.changed--;
        counts.get(d.state)!.changed++;
      }
      continue;
    }
    const conflict = d.state === 'failed' && isActive(row.state);
    const differences = differencesFrom(row, d, conflict);
    if (differences.length) {
      problems.push({
        kind: 'altered',
        legacy_id: row.legacyId,
        id,
        detail: `legacy id ${row.legacyId} → ${id}, unchanged since the import (revision 1), differs from its row: ${differences.join('; ')}`,
      });
    } else if (conflict) {
      conflicts++;
      count.conflicts--;
      counts.get('failed')!.conflicts++;
    }
  }

  // Every hash of the file and of its downloads has its guard read (BatchGet: cheap); the holders (one Query a hash)
  // are read where "one active download" can be broken: a hash of an active row or download, or one with a guard.
  const hashes = new Set<string>();
  const activeHashes = new Set<string>();
  for (const row of good.values()) {
    hashes.add(row.hash.infohash);
    if (isActive(row.state)) activeHashes.add(row.hash.infohash);
  }
  for (const d of downloads.values())
    for (const { infohash } of d.infohashes) {
      hashes.add(infohash);
      if (isActive(d.state)) activeHashes.add(infohash);
    }
  const guards = await store.guardsOf([...hashes]);
  const examined = [...hashes].filter((h) => activeHashes.has(h) || guards.has(h));
  const label = (id: string) => (legacyOf.has(id) ? `${id} (legacy id ${legacyOf.get(id)})` : id);
  let hashProblems = await activeHolderProblems(examined, store, downloads, label, guards);
  if (hashProblems.length) {
    // Read again what looked wrong, fresh: only what is still wrong is reported.
    const again = new Set(hashProblems.map((p) => p.infohash!));
    const fresh = new Map(
      [
        ...(await store.downloadsById([...downloads.keys()].filter((id) => involved(downloads.get(id)!, again)))),
      ].filter(([, d]) => !flaw(d)),
    );
    hashProblems = await activeHolderProblems([...again], store, new Map([...downloads, ...fresh]), label);
  }
  problems.push(...hashProblems);

  const states = DOWNLOAD_STATES.map((state) => {
    const c = counts.get(state)!;
    return { state, ...c, unexplained: c.table - c.file - c.conflicts - c.changed };
  }).filter((s) => s.file || s.table);
  return {
    ok: problems.length === 0,
    rows: total,
    expected: good.size,
    found,
    conflicts,
    changed,
    checked_hashes: examined.length,
    states,
    problems,
  };
}

/** What makes an item unusable as a download (the reads trust the store's own writes, not hand edits). */
function flaw(d: Download): string | undefined {
  if (!isDownloadState(d.state)) return `state ${JSON.stringify(d.state)}`;
  if (!Array.isArray(d.infohashes) || !d.infohashes.every((h) => typeof h?.infohash === 'string'))
    return `infohashes ${JSON.stringify(d.infohashes)}`;
  if (typeof d.revision !== 'number') return `revision ${JSON.stringify(d.revision)}`;
  return undefined;
}

function involved(d: Download, hashes: Set<string>): boolean {
  return d.infohashes.some((h) => hashes.has(h.infohash));
}

/** What differs between a download written by the import and what its row makes (the time when the row has one). */
function differencesFrom(row: Good, d: Download, conflict: boolean): string[] {
  const out: string[] = [];
  if (d.state !== row.state && !conflict) out.push(`state ${row.state} in the file, ${d.state} in the table`);
  if (d.name !== row.name)
    out.push(`name ${JSON.stringify(row.name)} in the file, ${JSON.stringify(d.name)} in the table`);
  const hashes = d.infohashes.map((h) => h.infohash);
  if (hashes.length !== 1 || hashes[0] !== row.hash.infohash)
    out.push(`infohash ${row.hash.infohash} in the file, ${hashes.join(', ') || 'none'} in the table`);
  if (row.time !== undefined && (d.created_at !== isoTime(row.time) || idTime(d.id) !== row.time))
    out.push(
      `created ${isoTime(row.time)} in the file, ${d.created_at} in the table (id time ${isoTime(idTime(d.id))})`,
    );
  return out;
}

async function activeHolderProblems(
  hashes: string[],
  store: LegacyCheckStore,
  known: Map<string, Download>,
  label: (id: string) => string,
  guardsRead?: Map<string, string>,
): Promise<LegacyProblem[]> {
  if (hashes.length === 0) return [];
  const guards = guardsRead ?? (await store.guardsOf(hashes));
  const memberships = await store.membersOf(hashes);
  // Downloads known to hold a hash, membership item or not.
  const wanted = new Set(hashes);
  const holding = new Map<string, string[]>();
  for (const d of known.values())
    for (const { infohash } of d.infohashes) {
      if (!wanted.has(infohash)) continue;
      const ids = holding.get(infohash);
      if (ids) ids.push(d.id);
      else holding.set(infohash, [d.id]);
    }
  // Holders the import did not write (downloads ingested since): read them too.
  const unknown = new Set<string>();
  for (const id of [...guards.values(), ...[...memberships.values()].flat()]) if (!known.has(id)) unknown.add(id);
  const others = new Map(
    [...(unknown.size ? await store.downloadsById([...unknown]) : [])].filter(([, d]) => !flaw(d)),
  );
  const get = (id: string) => known.get(id) ?? others.get(id);

  const problems: LegacyProblem[] = [];
  for (const infohash of hashes) {
    const guard = guards.get(infohash);
    const members = memberships.get(infohash) ?? [];
    const candidates = new Set([...members, ...(guard ? [guard] : []), ...(holding.get(infohash) ?? [])]);
    const active = [...candidates]
      .map(get)
      .filter((d): d is Download => !!d && isActive(d.state) && d.infohashes.some((h) => h.infohash === infohash))
      .sort((a, b) => (a.id < b.id ? -1 : 1)); // oldest first: the message reads the same on every run
    const problem = (kind: LegacyProblemKind, detail: string, id?: string) =>
      problems.push({ kind, infohash, ...(id ? { id } : {}), detail: `infohash ${infohash}: ${detail}` });
    if (active.length > 1) {
      problem(
        'two-active',
        `${active.length} active downloads: ${active.map((d) => `${label(d.id)} ${d.state}`).join(', ')}`,
      );
    } else if (active.length === 1) {
      const [owner] = active;
      if (guard === undefined)
        problem('no-guard', `active download ${label(owner.id)} holds it without a guard`, owner.id);
      else if (guard !== owner.id)
        problem(
          'guard-elsewhere',
          `the guard names ${label(guard)}, but the active download is ${label(owner.id)}`,
          owner.id,
        );
    } else if (guard !== undefined) {
      const owner = get(guard);
      problem(
        'stale-guard',
        `the guard names ${label(guard)}, which ${owner ? `is ${owner.state}${owner.infohashes.some((h) => h.infohash === infohash) ? '' : ' and does not hold it'}` : 'is not a download in the table'}: new downloads of this hash would be refused`,
        guard,
      );
    }
    for (const d of active)
      if (!members.includes(d.id))
        problem('no-membership', `active download ${label(d.id)} holds it without a membership item`, d.id);
  }
  return problems;
}

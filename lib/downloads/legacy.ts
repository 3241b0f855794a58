import { createHash } from 'node:crypto';
import { Clock, isoTime, systemClock } from '../clock';
import { idsAtTimes } from '../ident';
import { validateName } from '../names';
import { InvalidInfohashError } from './errors';
import { Infohash, parseInfohash } from './infohash';
import { LEGACY_ID_PATTERN } from './keys';
import { Download, DownloadState, isActive, isDownloadState } from './model';
import type { DownloadStore, LegacyImportOutcome, LegacyImportStore } from './store';

/**
 * Import of a legacy installation's downloads (SQLite, INTEGER AUTOINCREMENT
 * ids, one `infohash` column) into this store, keeping the chronology:
 *
 * - the ULID's time is the row's `created_at` (UTC, one-second resolution);
 *   rows of one second keep the order of their old ids (monotonic entropy);
 *   a `created_at` we cannot read takes the time of the FIRST import into the
 *   table (stored), so a re-run mints the ids the killed run planned;
 * - the entropy of a second starts at a hash of that second, so the ids are a
 *   function of the file: a re-run mints the same ids again, and a row it has
 *   not imported yet still lands between its neighbours of the same second;
 * - the old id → ULID item is written in the download's own transaction
 *   (`importDownloadIfNoActive`), so a row is imported exactly once however
 *   often the import is killed and re-run;
 * - rows sharing a hash are written one after the other in old-id order: the
 *   older active row takes the guard, a younger active one is imported `failed`
 *   and reported as a conflict. `idempotency_key` is ignored: activity is a
 *   function of `state` only.
 *
 * Bad rows (no id, no or bad hash, unknown state) are reported with their old
 * id and the reason, and never stop the run.
 */

/** One `download` row as SQLite returns it; every column but `id`, `infohash` and `state` may be absent. */
export interface LegacyRow {
  id: unknown;
  infohash: unknown;
  state: unknown;
  name?: unknown;
  created_at?: unknown;
  updated_at?: unknown;
  source_added_at?: unknown;
  /** SQLite's rowid, to point at a row whose id is unusable. */
  rowid?: unknown;
}

export type MappedRow =
  | {
      ok: true;
      legacyId: string;
      time: number | undefined;
      state: DownloadState;
      name: string;
      hash: Infohash;
      updatedAt?: number;
      sourceAddedAt?: number;
      warnings: string[];
    }
  | { ok: false; legacyId: string | null; rowid?: string; reason: string };

/** `YYYY-MM-DD HH:MM:SS[.fff][Z]` (SQLite's `datetime('now')`, UTC); the `T` form too. */
const LEGACY_TIME = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z?$/;
const MAX_ID_TIME = 2 ** 48 - 1;

/** Milliseconds since the epoch, or undefined when the value is not a valid UTC time a ULID can hold. */
export function parseLegacyTime(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = LEGACY_TIME.exec(value.trim());
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number);
  const ms = Date.UTC(y, mo - 1, d, h, mi, s) + Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  const back = new Date(ms);
  // Date.UTC rolls 2024-02-31 over into March: a time that does not round-trip is not a time.
  if (
    back.getUTCFullYear() !== y ||
    back.getUTCMonth() !== mo - 1 ||
    back.getUTCDate() !== d ||
    h > 23 ||
    mi > 59 ||
    s > 59
  )
    return undefined;
  return ms >= 0 && ms <= MAX_ID_TIME ? ms : undefined;
}

function legacyIdOf(value: unknown): string | { reason: string } {
  if (value === null || value === undefined) return { reason: 'NULL id' };
  const text =
    typeof value === 'bigint' || (typeof value === 'number' && Number.isSafeInteger(value))
      ? value.toString()
      : undefined;
  if (text === undefined || !LEGACY_ID_PATTERN.test(text))
    return { reason: `id is not a positive integer: ${describe(value)}` };
  return text;
}

/** A row checked and turned into what a download needs; the ULID is minted later, in file order. */
export function mapLegacyRow(row: LegacyRow): MappedRow {
  const id = legacyIdOf(row.id);
  if (typeof id !== 'string')
    return { ok: false, legacyId: null, ...(row.rowid != null ? { rowid: String(row.rowid) } : {}), reason: id.reason };
  const bad = (reason: string): MappedRow => ({ ok: false, legacyId: id, reason });

  if (row.infohash === null || row.infohash === undefined || row.infohash === '') return bad('no infohash');
  if (typeof row.infohash !== 'string') return bad(`infohash is not text: ${describe(row.infohash)}`);
  let hash: Infohash;
  try {
    hash = parseInfohash(row.infohash);
  } catch (err) {
    if (err instanceof InvalidInfohashError) return bad(err.message);
    throw err;
  }
  if (row.state === null || row.state === undefined) return bad('no state');
  if (!isDownloadState(row.state)) return bad(`unknown state ${describe(row.state)}`);

  const warnings: string[] = [];
  const time = parseLegacyTime(row.created_at);
  if (time === undefined)
    warnings.push(`created_at ${describe(row.created_at)} is not a UTC time: the import time is used`);
  const name = typeof row.name === 'string' ? row.name.trim() : '';
  let safe = hash.infohash;
  if (name) {
    try {
      safe = validateName(name);
    } catch (err) {
      warnings.push(`name ${describe(row.name)} refused (${(err as Error).message}): the infohash is used`);
    }
  } else if (row.name !== null && row.name !== undefined && row.name !== '') {
    warnings.push(`name ${describe(row.name)} is not text: the infohash is used`);
  }
  return {
    ok: true,
    legacyId: id,
    time,
    state: row.state,
    name: safe,
    hash,
    updatedAt: parseLegacyTime(row.updated_at),
    sourceAddedAt: parseLegacyTime(row.source_added_at),
    warnings,
  };
}

function describe(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  // node:sqlite returns a BLOB as a Uint8Array (a Buffer is one too).
  if (value instanceof Uint8Array) return `a ${value.length}-byte blob`;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Where a second's entropy starts: a hash of the second, so the same file mints the same ids. */
export function legacyEntropyStart(time: number): bigint {
  return createHash('sha256').update(`legacy-import:${time}`).digest().readBigUInt64BE(0);
}

export interface LegacyImportReport {
  dry_run: boolean;
  /** The time given to rows whose created_at is unreadable. */
  import_time: string;
  summary: {
    rows: number;
    imported: number;
    already_there: number;
    conflicts: number;
    bad_rows: number;
    errors: number;
  };
  /** Old id → new id of every row that is (or, in a dry run, would be) in the table. */
  ids: Record<string, string>;
  conflicts: Array<{ legacy_id: string; id: string; infohash: string; owner_id: string; owner_legacy_id?: string }>;
  bad_rows: Array<{ legacy_id: string | null; rowid?: string; reason: string }>;
  warnings: Array<{ legacy_id: string; reason: string }>;
  /** Rows a write failed for (storage unreachable, an id taken): a re-run retries them. */
  errors: Array<{ legacy_id: string; id: string; reason: string }>;
}

export interface LegacyImportDeps {
  store: LegacyImportStore & Pick<DownloadStore, 'findActiveByInfohash'>;
  now?: Clock;
  /** Reads only: what would be imported, nothing written. */
  dryRun?: boolean;
  /** Batches in flight at once (rows of one hash are still written in old-id order). */
  concurrency?: number;
  /** Rows per batch: as few transactions as DynamoDB's 100 items allow when none of them is refused. */
  batchRows?: number;
  /** After every row, imported or not. */
  onProgress?: (done: number) => void;
}

export async function importLegacyDownloads(
  rows: Iterable<LegacyRow>,
  deps: LegacyImportDeps,
): Promise<LegacyImportReport> {
  const now = (deps.now ?? systemClock)();
  const dryRun = deps.dryRun ?? false;
  const importTime = dryRun ? now : await deps.store.legacyImportTime(now);
  const known = await deps.store.legacyImports();
  const legacyOf = new Map([...known].map(([legacyId, id]) => [id, legacyId]));
  const mint = idsAtTimes(legacyEntropyStart);
  const report: LegacyImportReport = {
    dry_run: dryRun,
    import_time: isoTime(importTime),
    summary: { rows: 0, imported: 0, already_there: 0, conflicts: 0, bad_rows: 0, errors: 0 },
    ids: {},
    conflicts: [],
    bad_rows: [],
    warnings: [],
    errors: [],
  };
  const write = dryRun ? dryRunWriter(deps.store) : (batch: Pending[]) => deps.store.importDownloadsIfNoActive(batch);
  const seen = new Set<string>();
  // The last batch holding each hash: a batch with a hash waits for the one before it.
  const tails = new Map<string, Promise<void>>();
  const inFlight = new Set<Promise<void>>();
  const limit = Math.max(1, deps.concurrency ?? 4);
  const batchRows = Math.max(1, deps.batchRows ?? 32);
  let pending: Pending[] = [];
  let pendingHashes = new Set<string>();
  let done = 0;
  const settled = () => deps.onProgress?.(++done);

  const flush = async () => {
    if (pending.length === 0) return;
    const batch = pending;
    const hashes = [...pendingHashes];
    pending = [];
    pendingHashes = new Set();
    const before = hashes.flatMap((h) => tails.get(h) ?? []);
    const task = (async () => {
      await Promise.all(before);
      let outcomes: LegacyImportOutcome[];
      try {
        outcomes = await write(batch);
      } catch (err) {
        for (const row of batch)
          report.errors.push({ legacy_id: row.legacyId, id: row.download.id, reason: (err as Error).message });
        return;
      }
      batch.forEach((row, i) => {
        const outcome = outcomes[i];
        if (outcome.outcome === 'error')
          report.errors.push({ legacy_id: row.legacyId, id: row.download.id, reason: outcome.error.message });
        else record(report, row.legacyId, outcome, legacyOf);
      });
    })().finally(() => batch.forEach(settled));
    for (const h of hashes) tails.set(h, task);
    inFlight.add(task);
    void task.finally(() => {
      inFlight.delete(task);
      for (const h of hashes) if (tails.get(h) === task) tails.delete(h);
    });
    while (inFlight.size >= limit) await Promise.race(inFlight);
  };

  for (const row of rows) {
    report.summary.rows++;
    let mapped = mapLegacyRow(row);
    if (mapped.ok && seen.has(mapped.legacyId))
      mapped = { ok: false, legacyId: mapped.legacyId, reason: 'duplicate id' };
    if (!mapped.ok) {
      report.bad_rows.push({
        legacy_id: mapped.legacyId,
        ...(mapped.rowid ? { rowid: mapped.rowid } : {}),
        reason: mapped.reason,
      });
      settled();
      continue;
    }
    seen.add(mapped.legacyId);
    for (const reason of mapped.warnings) report.warnings.push({ legacy_id: mapped.legacyId, reason });
    // Minted for EVERY good row, imported before or not: the sequence of a second must be the one the first run planned.
    const time = mapped.time ?? importTime;
    const id = mint(time);
    const previous = known.get(mapped.legacyId);
    if (previous) {
      report.ids[mapped.legacyId] = previous;
      report.summary.already_there++;
      settled();
      continue;
    }
    legacyOf.set(id, mapped.legacyId);
    // Rows of one hash go in different batches, in old-id order: the older active row reaches the guard first.
    if (pendingHashes.has(mapped.hash.infohash)) await flush();
    pending.push({ download: toDownload(mapped, id, time), legacyId: mapped.legacyId });
    pendingHashes.add(mapped.hash.infohash);
    if (pending.length >= batchRows) await flush();
  }
  await flush();
  await Promise.all(inFlight);
  report.summary.bad_rows = report.bad_rows.length;
  report.summary.conflicts = report.conflicts.length;
  report.summary.errors = report.errors.length;
  return report;
}

type Pending = { download: Download; legacyId: string };

function toDownload(row: Extract<MappedRow, { ok: true }>, id: string, time: number): Download {
  return {
    id,
    state: row.state,
    name: row.name,
    infohashes: [row.hash],
    created_at: isoTime(time),
    updated_at: isoTime(row.updatedAt ?? time),
    ...(row.sourceAddedAt !== undefined ? { source_added_at: isoTime(row.sourceAddedAt) } : {}),
    revision: 1,
  };
}

function record(
  report: LegacyImportReport,
  legacyId: string,
  outcome: Exclude<LegacyImportOutcome, { outcome: 'error' }>,
  legacyOf: Map<string, string>,
): void {
  if (outcome.outcome === 'already') {
    // Another run imported it since this one started: its id is the one that counts.
    report.ids[legacyId] = outcome.id;
    report.summary.already_there++;
    return;
  }
  report.ids[legacyId] = outcome.download.id;
  report.summary.imported++;
  if (outcome.outcome === 'conflict') {
    const ownerLegacyId = legacyOf.get(outcome.ownerId);
    report.conflicts.push({
      legacy_id: legacyId,
      id: outcome.download.id,
      infohash: outcome.infohash,
      owner_id: outcome.ownerId,
      ...(ownerLegacyId ? { owner_legacy_id: ownerLegacyId } : {}),
    });
  }
}

/** The import's decisions from reads alone: which hash an earlier row of the file or a download in the table holds. */
function dryRunWriter(store: Pick<DownloadStore, 'findActiveByInfohash'>) {
  const claimed = new Map<string, string>();
  const one = async (d: Download): Promise<LegacyImportOutcome> => {
    if (!isActive(d.state)) return { outcome: 'imported', download: d };
    for (const { infohash } of d.infohashes) {
      const owner = claimed.get(infohash) ?? (await store.findActiveByInfohash(infohash))?.id;
      if (owner) return { outcome: 'conflict', download: { ...d, state: 'failed' }, infohash, ownerId: owner };
    }
    for (const { infohash } of d.infohashes) claimed.set(infohash, d.id);
    return { outcome: 'imported', download: d };
  };
  return async (batch: Pending[]): Promise<LegacyImportOutcome[]> => {
    const outcomes: LegacyImportOutcome[] = [];
    for (const row of batch) outcomes.push(await one(row.download));
    return outcomes;
  };
}

import { Clock, isoTime, systemClock } from '../clock';
import { EnvReader, type Env } from '../config/env';
import type { Logger } from '../log';
import { formatBytes } from '../i18n/format';
import { emitMetric } from '../metrics';
import type { TorrentClient } from '../torrents/client';
import type { TorrentInfo, TorrentSnapshot } from '../torrents/model';
import { torrentHashes } from './torrent-hashes';
import { isCheckingState } from './torrent-states';
import type { Download } from './model';
import type { DownloadStore } from './store';

/**
 * The disk guard: a download that would not fit on the client's disk beside a
 * reserve is paused in the client, with the reason on the download, and
 * started again when the space is back (decisions 425-428).
 *
 * The figures are the client's own, from the sync/maindata the poll already
 * reads: `server_state.free_space_on_disk` (its default save path) and each
 * torrent's `amount_left` (what it will still write). The downloads that are
 * running, and those the guard holds, are taken oldest first; each takes its
 * `amount_left` from the budget (free space minus the reserve) while it fits,
 * and one that does not fit is held, so a younger one that fits still runs.
 * A torrent paused by a person (paused, no hold) is theirs: never counted, never started.
 *
 * Order of writes, so that a crash between two of them converges: the hold is
 * written BEFORE the torrent is stopped (a stopped torrent without a hold
 * would look paused by a person and never be started again), and the torrent
 * is started BEFORE the hold is cleared. A person who starts a held torrent
 * by hand while it still does not fit finds it stopped again: the reserve wins.
 */

const UNITS: Record<string, number> = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4 };

export interface DiskSettings {
  /** Bytes kept free; null: the guard is off. */
  reserveBytes: number | null;
}

/** Decision 425. */
export const DEFAULT_DISK_RESERVE_BYTES = 5 * UNITS.GiB;

/** DOWNLOAD_DISK_RESERVE: bytes (`5368709120`), a binary unit (`5GiB`, `500 MiB`), or `off` (docs/downloads.md#settings). */
export function loadDiskSettings(env: Env = process.env): DiskSettings {
  const r = new EnvReader(env);
  const text = r.string('DOWNLOAD_DISK_RESERVE', {
    default: `${DEFAULT_DISK_RESERVE_BYTES}`,
    pattern: /^(off|\d{1,15}(\.\d{1,3})? ?(B|KiB|MiB|GiB|TiB)?)$/,
    hint: 'bytes, or a number with B, KiB, MiB, GiB or TiB (e.g. 5GiB), or off',
  });
  r.done();
  return { reserveBytes: parseReserve(text) };
}

function parseReserve(text: string): number | null {
  if (text === 'off') return null;
  const m = /^(\d+(?:\.\d+)?) ?([A-Za-z]+)?$/.exec(text)!;
  const bytes = Math.round(Number(m[1]) * UNITS[m[2] ?? 'B']);
  // 15 digits of TiB overflow what a double holds exactly: such a reserve is "more than any disk", kept finite.
  return Math.min(bytes, Number.MAX_SAFE_INTEGER);
}

export type DiskAction =
  | { kind: 'hold'; download: Download; torrent: TorrentInfo; needed: number }
  | { kind: 'stop-again'; download: Download; torrent: TorrentInfo }
  | { kind: 'start'; download: Download; torrent: TorrentInfo }
  | { kind: 'release'; download: Download };

export interface DiskPlan {
  actions: DiskAction[];
  /** Bytes the running and held downloads will still write. */
  neededBytes: number;
  /** Downloads held once the plan is carried out. */
  held: number;
}

const PAUSED_DL = /^(paused|stopped)DL$/;

/** Whether the client's figures can need the guard at all: some torrent is paused, or the running ones outgrow the budget. */
export function diskNeedsLook(present: TorrentInfo[], freeBytes: number, reserveBytes: number): boolean {
  let running = 0;
  for (const t of present) {
    if (PAUSED_DL.test(t.state)) return true;
    if (!isCheckingState(t.state)) running += t.amount_left ?? 0;
  }
  return running > freeBytes - reserveBytes;
}

/** Pure: what to do with each active download, from the client's figures. */
export function planDisk(
  active: Download[],
  present: TorrentInfo[],
  freeBytes: number,
  reserveBytes: number,
): DiskPlan {
  const byHash = new Map(present.flatMap((t) => torrentHashes(t).map((h) => [h.infohash, t] as const)));
  let budget = freeBytes - reserveBytes;
  let neededBytes = 0;
  let held = 0;
  const actions: DiskAction[] = [];
  // ULIDs sort by creation: the oldest download keeps its place.
  for (const download of [...active].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const torrent = download.infohashes.map((h) => byHash.get(h.infohash)).find(Boolean);
    const isHeld = download.hold === 'disk_space';
    if (!torrent || isCheckingState(torrent.state)) {
      if (isHeld) held++;
      continue;
    }
    const needed = torrent.amount_left;
    const paused = PAUSED_DL.test(torrent.state);
    // Its size is not known yet (a magnet before its metadata), or nothing is left to write.
    if (needed === undefined || !torrent.size || needed === 0) {
      if (isHeld) actions.push({ kind: 'release', download });
      continue;
    }
    if (paused && !isHeld) continue; // a person's pause
    neededBytes += needed;
    if (needed <= budget) {
      budget -= needed;
      if (isHeld) actions.push(paused ? { kind: 'start', download, torrent } : { kind: 'release', download });
    } else {
      held++;
      if (!isHeld) actions.push({ kind: 'hold', download, torrent, needed });
      else if (!paused) actions.push({ kind: 'stop-again', download, torrent });
    }
  }
  return { actions, neededBytes, held };
}

/** What the poll last saw of the disk: the deep healthcheck's `disk`. */
export interface DiskRecord {
  free_bytes: number;
  reserve_bytes: number;
  needed_bytes: number;
  held: number;
  at: string;
}

/** Why the disk is a problem, in the operator's words; undefined when it is not (the deep healthcheck's `disk`). */
export function diskProblem(disk: DiskRecord): string | undefined {
  if (disk.held === 0 && disk.free_bytes >= disk.reserve_bytes) return undefined;
  const b = (n: number) => formatBytes('en', n);
  return `${b(disk.free_bytes)} free, ${b(disk.reserve_bytes)} reserved, ${b(disk.needed_bytes)} still to write, ${disk.held} held`;
}

export interface DiskRecordStore {
  record(disk: DiskRecord): Promise<void>;
  read(): Promise<DiskRecord | undefined>;
}

export interface DiskGuardDeps {
  store: DownloadStore;
  torrents: TorrentClient;
  log: Logger;
  disk?: DiskSettings;
  diskRecords?: DiskRecordStore;
  now?: Clock;
}

export interface DiskReport {
  held: number;
  started: number;
}

/**
 * One look at the disk, after the poll followed the client's changes. `active` is the poll's own read on a full
 * update; otherwise the active set is read only when the client's figures can need the guard (diskNeedsLook).
 */
export async function guardDisk(
  deps: DiskGuardDeps,
  snapshot: TorrentSnapshot,
  active: Download[] | undefined,
): Promise<DiskReport> {
  const report = { held: 0, started: 0 };
  const reserve = (deps.disk ?? { reserveBytes: DEFAULT_DISK_RESERVE_BYTES }).reserveBytes;
  const free = snapshot.free_space_bytes;
  if (reserve === null || free === undefined) return report;
  if (!active && !diskNeedsLook(snapshot.present, free, reserve)) return report;
  const plan = planDisk(active ?? (await deps.store.listActive()), snapshot.present, free, reserve);
  const at = isoTime((deps.now ?? systemClock)());
  for (const action of plan.actions) {
    const { download } = action;
    const log = deps.log.child({ download_id: download.id, infohash: download.infohashes[0]?.infohash });
    try {
      if (action.kind === 'hold') {
        await deps.store.updateDetails(download.id, {
          hold: { reason: 'disk_space', since: at, needed_bytes: action.needed, free_bytes: free },
        });
        await deps.torrents.stop([action.torrent.hash]);
        report.held++;
        log.warn('download_held_for_disk', { needed_bytes: action.needed, free_bytes: free, reserve_bytes: reserve });
      } else if (action.kind === 'stop-again') {
        await deps.torrents.stop([action.torrent.hash]);
      } else if (action.kind === 'start') {
        await deps.torrents.start([action.torrent.hash]);
        await deps.store.updateDetails(download.id, { hold: null });
        report.started++;
        log.info('download_disk_hold_released', { free_bytes: free });
      } else {
        await deps.store.updateDetails(download.id, { hold: null });
      }
    } catch (err) {
      // One download's failure never stops the others; the next poll plans again from the client's figures.
      log.warn('download_disk_guard_failed', { action: action.kind, err });
    }
  }
  emitMetric('DownloadsHeldForDisk', plan.held, {}, { free_bytes: free, needed_bytes: plan.neededBytes });
  if (deps.diskRecords && (active || report.held || report.started)) {
    const record = { free_bytes: free, reserve_bytes: reserve, needed_bytes: plan.neededBytes, held: plan.held, at };
    await deps.diskRecords.record(record).catch((err) => deps.log.warn('disk_record_failed', { err }));
  }
  return report;
}

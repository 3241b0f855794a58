import { Clock, isoTime, parseIsoTime, systemClock } from '../clock';
import type { Logger } from '../log';
import { InvalidFileNameError, validateName } from '../names';
import type { TorrentClient } from '../torrents/client';
import type { TorrentInfo } from '../torrents/model';
import { type CategoryRecordStore, refreshCategoryRecord } from './category';
import { DiskRecordStore, DiskSettings, guardDisk } from './disk-guard';
import { DEFAULT_LIFECYCLE, judgeTimeout, LifecycleSettings, madeProgress } from './lifecycle';
import { clientIds, shareFields } from './service';
import { torrentHashes } from './torrent-hashes';
import { transferDue, transferOf } from './transfer';
import { isCheckingState, mapClientState } from './torrent-states';
import { ActiveExistsError, InfohashTakenError, InvalidTransitionError, TorrentAnswerInvalidError } from './errors';
import type { Infohash } from './infohash';
import { Download, DownloadState, FailureReason, isActive } from './model';
import type { DownloadStore } from './store';
import { clientLimits, DEFAULT_SHARE, goalOf, judgeShare, removalDue, ShareSettings } from './share-goals';

/**
 * The scheduled poll: make our downloads agree with the client. It reads the
 * client's changes since its last read (sync/maindata; everything on a full
 * update) and, per changed torrent, independently (one bad torrent never
 * stops the others):
 * - a torrent whose hashes have an active download: append the hashes it
 *   lacks, follow the client's state and progress;
 * - none active, but a finished download had them and the torrent is alive:
 *   resurrect that download (the guard decides) — except a download a person
 *   CANCELLED, which only a torrent added after the cancel (or a retry) brings back;
 * - never seen: adopt it as a new download, under a safe name.
 * A torrent in a checking state (`checkingResumeData` after the client's
 * restart, `checkingDL`/`checkingUP`) changes nothing: its state and progress
 * are not known yet (torrent-states.ts).
 * On a full update it also looks for active downloads whose torrent is gone:
 * first sighting records `missing_since`; past the grace period the download
 * becomes `failed` with `review_reason: missing_in_client` (its guards released).
 * Last, the disk guard (disk-guard.ts) pauses what would not fit on the disk.
 * The store's guarded operations decide every race with ingest and retry;
 * losing such a race is normal and logged at debug.
 */

export type Outcome = 'adopted' | 'resurrected' | 'updated' | 'unchanged' | 'skipped' | 'raced' | 'failed';

export interface ReconcileDeps {
  store: DownloadStore;
  torrents: TorrentClient;
  log: Logger;
  /** How long an active download's torrent may be missing before review (default 10 min). */
  missingGraceMs?: number;
  /** When downloads that do not move end (lifecycle.ts; default DEFAULT_LIFECYCLE). */
  lifecycle?: LifecycleSettings;
  /** The disk guard's reserve (disk-guard.ts; default 5 GiB), and where it records what it saw. */
  disk?: DiskSettings;
  diskRecords?: DiskRecordStore;
  /** The default seeding goal (share-goals.ts; default none, keep). */
  share?: ShareSettings;
  /** Where the client's categories under ours are recorded on full updates, for the web form (category.ts). */
  categoryRecords?: CategoryRecordStore;
  /** Figures-only writes at most this often per download (transfer.ts; default 2 min). */
  transferIntervalMs?: number;
  now?: Clock;
}

export interface PollReport extends Record<Outcome, number> {
  full: boolean;
  torrents: number;
  missing: number;
  set_aside: number;
  /** Timeouts reached this poll (full updates only): warned, and ended `failed` after the grace. */
  warned: number;
  timed_out: number;
  /** Downloads the disk guard paused this poll, and those it started again (disk-guard.ts). */
  disk_held: number;
  disk_started: number;
  /** Seeding goals met this poll, and torrents removed for one (share-goals.ts). */
  share_met: number;
  share_removed: number;
}

export async function reconcile(deps: ReconcileDeps): Promise<PollReport> {
  const snapshot = await deps.torrents.snapshot();
  const report: PollReport = {
    full: snapshot.full,
    torrents: snapshot.present.length,
    adopted: 0,
    resurrected: 0,
    updated: 0,
    unchanged: 0,
    skipped: 0,
    raced: 0,
    failed: 0,
    missing: 0,
    set_aside: 0,
    warned: 0,
    timed_out: 0,
    disk_held: 0,
    disk_started: 0,
    share_met: 0,
    share_removed: 0,
  };
  for (const torrent of snapshot.changed) {
    let outcome: Outcome;
    try {
      outcome = await reconcileOne(deps, torrent, report);
    } catch (err) {
      if (isRace(err)) {
        deps.log.debug('torrent_reconcile_raced', { hash: torrent.hash, err });
        outcome = 'raced';
      } else {
        deps.log.error('torrent_reconcile_failed', { torrent: torrent.name, hash: torrent.hash, err });
        outcome = 'failed';
      }
    }
    report[outcome]++;
  }
  let active: Download[] | undefined;
  if (snapshot.full) {
    // One read of the active set serves every check (after the changes above were written).
    active = await deps.store.listActive();
    await checkMissing(deps, snapshot.present, report, active);
    await checkTimeouts(deps, snapshot.present, report, active);
    await finishRemovals(deps, snapshot.present, report);
    if (deps.categoryRecords)
      await refreshCategoryRecord(deps.torrents, deps.categoryRecords, isoTime((deps.now ?? systemClock)())).catch(
        (err) => deps.log.warn('category_record_failed', { err }),
      );
  }
  const disk = await guardDisk(deps, snapshot, active);
  report.disk_held = disk.held;
  report.disk_started = disk.started;
  deps.log.info('torrent_poll_done', { ...report });
  return report;
}

async function reconcileOne(deps: ReconcileDeps, torrent: TorrentInfo, report: PollReport): Promise<Outcome> {
  const hashes = torrentHashes(torrent);
  if (hashes.length === 0) {
    deps.log.warn('torrent_without_valid_hash', { hash: torrent.hash });
    return 'skipped';
  }
  const log = deps.log.child({ infohash: hashes[0].infohash });
  // Validate the whole answer before writing anything about it.
  const state = mapClientState(torrent.state);
  if (!state)
    throw new TorrentAnswerInvalidError(`unknown torrent state ${JSON.stringify(torrent.state.slice(0, 40))}`);
  const progress = Number.isNaN(torrent.progress) ? undefined : torrent.progress;
  if (progress !== undefined && !(progress >= 0 && progress <= 1))
    throw new TorrentAnswerInvalidError(`progress ${progress} is not within 0..1`);
  // A restart's checkingResumeData (progress 0) moved finished downloads back to queued, with notifications:
  // a checking state says nothing yet, whatever download it belongs to.
  if (isCheckingState(torrent.state)) {
    log.debug('torrent_checking_ignored', { state: torrent.state });
    return 'unchanged';
  }

  const owners = await Promise.all(hashes.map((h) => deps.store.findActiveByInfohash(h.infohash)));
  if (!owners.some(Boolean)) {
    const finished = await newestFinished(
      deps.store,
      hashes.map((h) => h.infohash),
    );
    if (finished) {
      // A completed download still seeding: its goal (the one thing the poll still does for a finished download).
      if (finished.state === 'completed' && state === 'completed')
        return (await followShare(deps, log, finished, torrent, report)) ? 'updated' : 'unchanged';
      if (!isActive(state)) return 'unchanged';
      // A timed-out download is like a cancelled one: its own dead torrent lingering in the client is no news.
      const endedByUs = finished.state === 'cancelled' || finished.failure_reason !== undefined;
      if (endedByUs && !addedAfter(torrent, finished.cancelled_at ?? finished.updated_at)) {
        // The person's cancel stands: this is the torrent they cancelled, not a new one.
        log.debug('torrent_of_cancelled_download_ignored', { download_id: finished.id });
        return 'unchanged';
      }
      await deps.store.activateIfNoOtherActive(finished.id, state);
      const resurrected = await deps.store.addInfohashes(finished.id, hashes);
      await keepDetails(deps, resurrected, progress, torrent, resurrected, true);
      log.info('download_resurrected', { download_id: finished.id, from: finished.state, to: state });
      return 'resurrected';
    }
  }

  // The usual case: one active owner already holding every hash (nothing to create or append).
  const owner = owners.find(Boolean);
  const settled =
    owner &&
    owners.every((o) => !o || o.id === owner.id) &&
    hashes.every((h) => owner.infohashes.some((x) => x.infohash === h.infohash));
  // Otherwise adopt, or dedup onto the active owner appending missing hashes (and merge a split hybrid).
  const { created, download } = settled
    ? { created: false, download: owner }
    : await deps.store.createDownloadIfNoActive(
        {
          state: isActive(state) ? state : 'downloading',
          name: adoptedName(torrent.name, hashes),
          source_added_at: addedOn(torrent),
          ...shareFields({}, deps.share),
          ...(progress !== undefined ? { progress } : {}),
        },
        hashes,
      );
  if (created) log.info('download_adopted', { download_id: download.id });
  const followed = await follow(deps, log, download, state);
  const detailed = await keepDetails(deps, followed ?? download, progress, torrent, download, followed !== undefined);
  if (followed?.state === 'completed') await followShare(deps, log, followed, torrent, report);
  if (created) return 'adopted';
  const appended = download.infohashes.length > (owners.find(Boolean)?.infohashes.length ?? 0);
  return followed || appended || detailed ? 'updated' : 'unchanged';
}

async function follow(
  deps: ReconcileDeps,
  log: Logger,
  download: Download,
  state: DownloadState,
): Promise<Download | undefined> {
  if (state === download.state) return undefined;
  const next = await deps.store.setDownloadState(download.id, download.state, state);
  log.info('download_state_followed', { download_id: download.id, from: download.state, to: state });
  return next;
}

/**
 * Progress as the client reports it; a torrent seen again is no longer missing. Progress made (bytes
 * done grew, the metadata arrived, out of a pause: lifecycle.ts `madeProgress`, judged against `before`,
 * the row as it was before this poll followed its state) restarts the timeout clock and clears a
 * warning, in the same conditional write.
 */
async function keepDetails(
  deps: ReconcileDeps,
  download: Download,
  progress: number | undefined,
  torrent: TorrentInfo,
  before: Download,
  stateMoved: boolean,
): Promise<boolean> {
  const progressChanged = progress !== undefined && progress !== download.progress;
  const moved = isActive(download.state)
    ? madeProgress(before, torrent.state, progress)
    : { progressed: false, metadataArrived: false };
  const now = (deps.now ?? systemClock)();
  // The figures ride along with any other write (and a state move: a completed download keeps its last
  // figures); alone, at most every TRANSFER_WRITE_INTERVAL_MS (decision 408).
  const figures = transferOf(torrent);
  const written = progressChanged || !!download.missing_since || moved.progressed;
  const withFigures = transferDue(download, figures, written || stateMoved, now, deps.transferIntervalMs);
  if (!written && !withFigures) return false;
  const at = isoTime(now);
  await deps.store.updateDetails(download.id, {
    ...(withFigures ? { transfer: { figures: figures!, at } } : {}),
    ...(progressChanged ? { progress } : {}),
    ...(download.missing_since ? { missing_since: null } : {}),
    ...(moved.progressed ? { progress_at: at } : {}),
    ...(moved.metadataArrived ? { metadata_at: at } : {}),
    ...(moved.progressed && download.warning ? { warning: null } : {}),
  });
  return true;
}

/**
 * The timeouts (lifecycle.ts `judgeTimeout`) of the active downloads whose torrent the client holds. Full
 * updates only, like the missing check: a torrent that does not move is not in a delta. A download that
 * ends here is removed from the client (files kept): its dead torrent must not linger, and if the removal
 * fails the poll still never brings it back from that torrent (reconcileOne).
 */
async function checkTimeouts(
  deps: ReconcileDeps,
  present: TorrentInfo[],
  report: PollReport,
  active: Download[],
): Promise<void> {
  const now = (deps.now ?? systemClock)();
  const settings = deps.lifecycle ?? DEFAULT_LIFECYCLE;
  const byHash = new Map(present.flatMap((t) => torrentHashes(t).map((h) => [h.infohash, t] as const)));
  for (const download of active) {
    const torrent = download.infohashes.map((h) => byHash.get(h.infohash)).find(Boolean);
    if (!torrent) continue;
    const verdict = judgeTimeout(download, torrent.state, settings, now);
    if (verdict.action === 'none') continue;
    const log = deps.log.child({ download_id: download.id, infohash: download.infohashes[0]?.infohash });
    try {
      if (verdict.action === 'clear') {
        await deps.store.updateDetails(download.id, { warning: null });
      } else if (verdict.action === 'warn') {
        const warned = await deps.store.warnIfNoProgressSince(download.id, verdict.reason, verdict.basis);
        if (warned.warning !== verdict.reason) continue;
        report.warned++;
        log.warn('download_timeout_warned', { reason: verdict.reason, progress_at: verdict.basis });
        if (settings.graceS === 0) await endTimedOut(deps, log, warned, verdict.reason, warned.warned_at!, report);
      } else {
        await endTimedOut(deps, log, download, verdict.reason, verdict.warnedAt, report);
      }
    } catch (err) {
      if (!isRace(err)) throw err;
      log.debug('download_timeout_raced', { err });
    }
  }
}

async function endTimedOut(
  deps: ReconcileDeps,
  log: Logger,
  download: Download,
  reason: FailureReason,
  warnedAt: string,
  report: PollReport,
): Promise<void> {
  await deps.store.failTimedOut(download.id, reason, warnedAt);
  report.timed_out++;
  log.warn('download_timed_out', { reason, warned_at: warnedAt });
  try {
    await deps.torrents.remove(clientIds(download.infohashes), { deleteFiles: false });
  } catch (err) {
    log.warn('torrent_timeout_remove_failed', { err });
  }
}

/**
 * A completed download's seeding goal (share-goals.ts `judgeShare`): its clock started, the goal met (with the
 * removal intended, written BEFORE the client is told), the removal carried out. Of two polls at once only the
 * one whose `met` write landed goes on (the other's is refused: a race); a removal intended by a poll that
 * crashed is finished by a later one once the lease is over.
 */
async function followShare(
  deps: ReconcileDeps,
  log: Logger,
  download: Download,
  torrent: TorrentInfo,
  report: PollReport,
): Promise<boolean> {
  const verdict = judgeShare(download, torrent, deps.share ?? DEFAULT_SHARE, (deps.now ?? systemClock)());
  if (verdict.action === 'none') return false;
  if (verdict.action === 'start') {
    await deps.store.recordShare(download.id, { seeding: true });
    log.info('download_seeding_started', { download_id: download.id });
    // The client is told the goal again (an adopted torrent, or one added before it had one): it stops
    // uploading at the goal by itself. A refusal only loses that; the poll still judges the goal.
    await deps.torrents
      .setShareLimits(clientIds(download.infohashes), clientLimits(goalOf(download, deps.share ?? DEFAULT_SHARE)))
      .catch((err) => log.warn('torrent_share_limits_failed', { err }));
    return true;
  }
  if (verdict.action === 'met') {
    const removal = verdict.removal === 'keep' ? undefined : verdict.removal;
    const met = await deps.store.recordShare(download.id, { met: true, ...(removal ? { removal } : {}) });
    report.share_met++;
    log.info('download_share_goal_met', {
      download_id: download.id,
      action: verdict.removal,
      ratio: torrent.ratio,
      seeding_time: torrent.seeding_time,
    });
    if (removal) await removeShared(deps, log, met, torrent, report);
    return true;
  }
  await removeShared(deps, log, download, torrent, report);
  return true;
}

/**
 * The removal a met goal intended, then its record. Only a torrent in the product's category, added before the
 * intent, is removed (lib/torrents `removeOwn` reads the client again): a torrent a person added again later
 * is never touched (ours is gone already), nor one in another category (recorded removed, files kept: it is
 * no longer ours to remove).
 * `torrent` undefined: the client holds none (the crash fell between the delete and its record).
 */
async function removeShared(
  deps: ReconcileDeps,
  log: Logger,
  download: Download,
  torrent: TorrentInfo | undefined,
  report: PollReport,
): Promise<void> {
  const deleteFiles = download.share_removal === 'remove_files';
  // No torrent, or one added after the intent: ours is gone already (the crash fell after its delete).
  let touched = torrent === undefined || addedAfter(torrent, download.share_met_at ?? download.updated_at);
  if (!touched) touched = (await deps.torrents.removeOwn(clientIds(download.infohashes), { deleteFiles })).length > 0;
  if (!touched) log.warn('download_share_torrent_not_ours', { download_id: download.id });
  await deps.store.recordShare(download.id, { removed: true, files: touched && deleteFiles });
  report.share_removed++;
  log.info('download_share_removed', { download_id: download.id, files: touched && deleteFiles, touched });
}

/**
 * Removals intended and never recorded done (full updates): a poll crashed between the intent and the record.
 * A download whose torrent the client still holds is finished by reconcileOne (it saw the torrent); one whose
 * torrent is gone is only recorded; a marker its download no longer intends is dropped.
 */
async function finishRemovals(deps: ReconcileDeps, present: TorrentInfo[], report: PollReport): Promise<void> {
  const ids = await deps.store.pendingShareRemovals();
  if (ids.length === 0) return;
  const now = (deps.now ?? systemClock)();
  const seen = new Set(present.flatMap((t) => torrentHashes(t).map((h) => h.infohash)));
  for (const id of ids) {
    const log = deps.log.child({ download_id: id });
    try {
      const d = await deps.store.get(id);
      if (!d || d.state !== 'completed' || !d.share_removal || d.removed_at) {
        await deps.store.dropShareRemoval(id);
        continue;
      }
      if (d.infohashes.some((h) => seen.has(h.infohash)) || !removalDue(d, now)) continue;
      await removeShared(deps, log, d, undefined, report);
    } catch (err) {
      if (!isRace(err)) throw err;
      log.debug('download_share_removal_raced', { err });
    }
  }
}

/**
 * Active downloads with no torrent in the client (by any hash). Runs on full
 * updates only: it reads every active download, which must not happen each minute.
 */
async function checkMissing(
  deps: ReconcileDeps,
  present: TorrentInfo[],
  report: PollReport,
  active: Download[],
): Promise<void> {
  const now = (deps.now ?? systemClock)();
  const grace = deps.missingGraceMs ?? 10 * 60_000;
  const seen = new Set(present.flatMap((t) => torrentHashes(t).map((h) => h.infohash)));
  for (const download of active) {
    if (download.infohashes.some((h) => seen.has(h.infohash))) continue;
    report.missing++;
    try {
      if (!download.missing_since) {
        await deps.store.updateDetails(download.id, { missing_since: isoTime(now) });
        // An unreadable mark never sets a download aside (it only delays review).
      } else if (now - (parseIsoTime(download.missing_since) ?? Infinity) >= grace) {
        await deps.store.setDownloadState(download.id, download.state, 'failed', 'missing_in_client');
        deps.log.warn('download_missing_in_client', {
          download_id: download.id,
          infohash: download.infohashes[0]?.infohash,
          missing_since: download.missing_since,
        });
        report.set_aside++;
      }
    } catch (err) {
      if (!isRace(err)) throw err;
      deps.log.debug('download_missing_check_raced', { download_id: download.id, err });
    }
  }
}

async function newestFinished(store: DownloadStore, hashes: string[]): Promise<Download | undefined> {
  const histories = await Promise.all(hashes.map((h) => store.historyOfInfohash(h)));
  return histories
    .flat()
    .filter((d) => !isActive(d.state) && !d.merged_into)
    .sort((a, b) => (a.id < b.id ? 1 : -1))[0];
}

/**
 * The client's name, if it passes the same rules as a name from the API
 * (lib/names); otherwise the first hash. It is sent back to the client as
 * `dn` on a retry, so a hostile name must never be kept.
 */
function adoptedName(name: string, hashes: Infohash[]): string {
  try {
    return validateName(name);
  } catch (err) {
    if (!(err instanceof InvalidFileNameError)) throw err;
    return hashes[0].infohash;
  }
}

function addedAfter(torrent: TorrentInfo, iso: string): boolean {
  return Number.isFinite(torrent.added_on) && torrent.added_on * 1000 > (parseIsoTime(iso) ?? Infinity);
}

function addedOn(torrent: TorrentInfo): string | undefined {
  return Number.isFinite(torrent.added_on) && torrent.added_on > 0 ? isoTime(torrent.added_on * 1000) : undefined;
}

/** Losing a CAS or guard race to ingest, retry or another poll: the winner's write stands. */
function isRace(err: unknown): boolean {
  return err instanceof InvalidTransitionError || err instanceof ActiveExistsError || err instanceof InfohashTakenError;
}

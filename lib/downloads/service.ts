import { isId } from '../ident';
import type { Logger } from '../log';
import { validateName } from '../names';
import type { TorrentClient } from '../torrents/client';
import {
  InvalidTransitionError,
  DownloadNotFoundError,
  NotACandidateError,
  InvalidCursorError,
  InvalidMagnetError,
} from './errors';

/** test/unit/http/request.test.ts imports it from here (the HTTP edge's test): the class is errors.ts's. */
export { InvalidCursorError };
import {
  type CategoryChoice,
  type CategoryRecordStore,
  chosenCategory,
  ensureCategory,
  inCategoryTree,
  rememberCategory,
} from './category';
import { Infohash, parseInfohashes } from './infohash';
import { clientMagnet, formatMagnet, type MagnetOptions, parseMagnet } from './magnet';
import { effectiveTimeout, MAX_TIMEOUT_S } from './lifecycle';
import { Download, DownloadState, isActive, ShareAction } from './model';
import {
  clientLimits,
  DEFAULT_SHARE,
  goalOf,
  hasGoal,
  isShareAction,
  MAX_SHARE_RATIO,
  MAX_SHARE_TIME_S,
  ShareSettings,
  validRatio,
  validTimeS,
} from './share-goals';
import { parseTorrentFile, type TorrentFile } from './torrent-file';
import type { DownloadStore, ListPage } from './store';

/**
 * Use cases of the downloads API over the store and the torrent client.
 * Input here is already shaped by the request schemas; values (magnets,
 * hashes, states) are parsed here, where their meaning lives.
 */

export interface DownloadsDeps {
  store: DownloadStore;
  torrents: TorrentClient;
  log: Logger;
  /** What a cancel does to the torrent: remove it (files kept unless deleteFiles) or stop it. Default: remove, keep files. */
  cancel?: { action: 'remove' | 'stop'; deleteFiles: boolean };
  /** How magnets are read (magnet.ts): by default a tracker or peer on an internal host is refused. */
  magnets?: MagnetOptions;
  /** The default seeding goal (share-goals.ts; DOWNLOAD_SHARE_*): none, keep. */
  share?: ShareSettings;
  /** Where the client's categories are recorded for the web form (category.ts); an add that creates one adds it. */
  categoryRecords?: CategoryRecordStore;
}

/** Per-download overrides of the timeouts (lifecycle.ts), already bounded by the request schema. */
export interface TimeoutOverrides {
  metadata_timeout_s?: number;
  stall_timeout_s?: number;
  /** The seeding goal of this download (share-goals.ts), instead of the settings'. */
  share_ratio?: number;
  share_time_s?: number;
  share_action?: ShareAction;
}

export type IngestRequest = (
  | { magnet: string }
  | { infohashes: string[]; name?: string }
  /** A .torrent file's bytes (torrent-file.ts); `name` replaces the file's own. */
  | { torrent: Uint8Array; name?: string }
) &
  TimeoutOverrides &
  CategoryChoice;

/** States a retry starts from: a download that failed, was cancelled, or is stuck. */
export const RETRYABLE: readonly DownloadState[] = ['failed', 'cancelled', 'stuck'];

export async function ingest(
  deps: DownloadsDeps,
  request: IngestRequest,
): Promise<{ created: boolean; download: Download }> {
  const { hashes, name, magnet, torrentFile } = describeRequest(request, deps.magnets);
  const overrides = timeoutOverrides(request);
  const share = shareFields(request, deps.share);
  // A sub-category is made sure of in the client BEFORE anything is written: a conflict (another save path)
  // is a refusal that leaves nothing behind, and the torrent's save path is the category's from its first byte.
  const category =
    request.category === undefined && request.category_save_path === undefined
      ? undefined
      : chosenCategory(deps.torrents.category, request);
  if (category && (await ensureCategory(deps.torrents, category)) && deps.categoryRecords)
    await rememberCategory(deps.torrents.category, deps.categoryRecords, category, new Date().toISOString()).catch(
      (err) => deps.log.warn('category_record_failed', { err }),
    );
  const result = await deps.store.createDownloadIfNoActive(
    { state: 'queued', name, magnet, ...overrides, ...share, ...(category ? { category: category.name } : {}) },
    hashes,
  );
  const log = deps.log.child({ download_id: result.download.id, infohash: result.download.infohashes[0].infohash });
  if (!result.created) {
    log.info('download_deduplicated', { infohashes: result.download.infohashes.length });
    return result;
  }
  log.info('download_created', { name });
  // Hand it to the client now; if the client is down, the download is `stuck`
  // (active, retryable) rather than queued forever or lost.
  try {
    // A .torrent is handed over as the file: the client has the metadata without waiting for peers.
    await deps.torrents.add(magnet ?? formatMagnet(hashes, name), {
      tags: [result.download.id],
      ...clientLimits(goalOf(share, deps.share ?? DEFAULT_SHARE)),
      ...(category ? { category: category.name } : {}),
      ...(torrentFile
        ? { torrentFile: torrentFile.bytes, ...(name !== torrentFile.name ? { rename: name } : {}) }
        : {}),
    });
    return result;
  } catch (err) {
    log.warn('torrent_add_failed', { err });
    const stuck = await deps.store.setDownloadState(result.download.id, 'queued', 'stuck').catch(() => result.download);
    return { created: true, download: stuck };
  }
}

/**
 * The seeding goal written on a new download: the request's values over the settings', re-checked here like the
 * timeouts; nothing when the result is "no goal, keep" (the download then carries no share fields at all).
 */
export function shareFields(
  request: Pick<TimeoutOverrides, 'share_ratio' | 'share_time_s' | 'share_action'>,
  settings: ShareSettings = DEFAULT_SHARE,
): Pick<Download, 'share_ratio' | 'share_time_s' | 'share_action'> {
  const { share_ratio: ratio, share_time_s: timeS, share_action: action } = request;
  if (ratio !== undefined && !validRatio(ratio))
    throw new RangeError(`share_ratio must be within 0..${MAX_SHARE_RATIO}`);
  if (timeS !== undefined && !validTimeS(timeS))
    throw new RangeError(`share_time_s must be an integer of 0..${MAX_SHARE_TIME_S}`);
  if (action !== undefined && !isShareAction(action))
    throw new RangeError('share_action must be keep, remove or remove_files');
  const goal = goalOf(request, settings);
  if (!hasGoal(goal) && goal.action === 'keep') return {};
  return {
    ...(goal.ratio !== null ? { share_ratio: goal.ratio } : {}),
    ...(goal.timeS > 0 ? { share_time_s: goal.timeS } : {}),
    share_action: goal.action,
  };
}

/** The overrides a request carries, re-checked here (a caller other than the API schema gets the same bounds). */
function timeoutOverrides(request: TimeoutOverrides): TimeoutOverrides {
  const out: TimeoutOverrides = {};
  for (const key of ['metadata_timeout_s', 'stall_timeout_s'] as const) {
    const value = request[key];
    if (value === undefined) continue;
    if (effectiveTimeout(value, -1) === -1) throw new RangeError(`${key} must be an integer of 0..${MAX_TIMEOUT_S}`);
    out[key] = value;
  }
  return out;
}

/**
 * "Keep waiting" on a warned download: the warning cleared and the clock restarted, once however many
 * presses arrive together (the store's write is conditioned on the warning); a press on a download
 * without a warning changes nothing. A finished download is refused (InvalidTransitionError: retry it).
 */
export async function keepWaiting(deps: Pick<DownloadsDeps, 'store' | 'log'>, id: string): Promise<Download> {
  const before = await mustGet(deps.store, id);
  const after = await deps.store.keepWaiting(id);
  if (before.warning && after.revision !== before.revision)
    deps.log.info('download_kept_waiting', { download_id: id, warning: before.warning });
  return after;
}

/** Activate first (the guard decides), then add to the client; on failure roll the state back. */
export async function retry(deps: DownloadsDeps, id: string): Promise<Download> {
  const before = await mustGet(deps.store, id);
  if (!RETRYABLE.includes(before.state)) {
    throw new InvalidTransitionError(
      id,
      before.state,
      'queued',
      `only ${RETRYABLE.join(', ')} downloads can be retried`,
    );
  }
  return activateAndAdd(deps, before, { done: 'download_retried', rolledBack: 'download_retry_rolled_back' });
}

/** The guarded activation (activateIfNoOtherActive), then the client; a client refusal rolls the state back. */
async function activateAndAdd(
  deps: DownloadsDeps,
  before: Download,
  events: { done: string; rolledBack: string },
): Promise<Download> {
  const id = before.id;
  const activated = await deps.store.activateIfNoOtherActive(id, 'queued');
  const log = deps.log.child({ download_id: id, infohash: before.infohashes[0]?.infohash });
  try {
    // In its own category; one outside today's tree (TORRENT_CLIENT_CATEGORY changed since) goes to the default.
    const category =
      before.category && inCategoryTree(deps.torrents.category, before.category) ? before.category : undefined;
    await deps.torrents.add(magnetOf(before, deps.magnets), {
      tags: [id],
      ...clientLimits(goalOf(before, deps.share ?? DEFAULT_SHARE)),
      ...(category ? { category } : {}),
    });
    log.info(events.done, { from: before.state });
    return activated;
  } catch (err) {
    log.warn(events.rolledBack, { from: before.state, err });
    await deps.store.setDownloadState(id, 'queued', before.state).catch((rollbackErr) => {
      // Someone moved it meanwhile (the poll saw the torrent): their state stands.
      log.warn('download_retry_rollback_skipped', { err: rollbackErr });
    });
    throw err;
  }
}

/** What a person decides about a download: every download that ever shared one of its hashes (itself included). */
export interface Review {
  download: Download;
  /** Newest first. */
  candidates: Download[];
  /** Why it needs a decision; empty when nothing is wrong. */
  reasons: string[];
}

export async function reviewDownload(deps: Pick<DownloadsDeps, 'store'>, id: string): Promise<Review> {
  const download = await mustGet(deps.store, id);
  const byId = new Map<string, Download>([[download.id, download]]);
  for (const hash of download.infohashes) {
    for (const other of await deps.store.historyOfInfohash(hash.infohash))
      if (!byId.has(other.id)) byId.set(other.id, other);
  }
  const candidates = [...byId.values()].sort((a, b) => (a.id < b.id ? 1 : -1));
  const reasons: string[] = [];
  if (download.state === 'stuck' || download.state === 'failed') reasons.push(download.state);
  if (download.review_reason) reasons.push(download.review_reason);
  if (download.source_added_at) reasons.push('adopted_from_client');
  if (candidates.length > 1) reasons.push('shares_infohash');
  return { download, candidates, reasons };
}

/**
 * Makes `candidateId` the active download of the hashes it shares with `id`
 * (the seed's "relink"): only a download that shares a hash qualifies, and
 * the guard refuses it while another download is active (ActiveExistsError
 * names that owner). Ids are parsed by the caller, before this is reached.
 */
export async function relink(deps: DownloadsDeps, id: string, candidateId: string): Promise<Download> {
  const { candidates } = await reviewDownload(deps, id);
  const candidate = candidates.find((c) => c.id === candidateId);
  if (!candidate) throw new NotACandidateError(id, candidateId);
  return activateAndAdd(deps, candidate, { done: 'download_relinked', rolledBack: 'download_relink_rolled_back' });
}

export async function changeState(deps: DownloadsDeps, id: string, to: DownloadState): Promise<Download> {
  const current = await mustGet(deps.store, id);
  if (!isActive(current.state) && isActive(to)) {
    throw new InvalidTransitionError(
      id,
      current.state,
      to,
      'use POST /downloads/{id}/retry to restart a finished download',
    );
  }
  const next = await deps.store.setDownloadState(id, current.state, to);
  deps.log.info('download_state_changed', { download_id: id, from: current.state, to });
  if (to === 'cancelled' && current.state !== 'cancelled') await cancelInClient(deps, next);
  return next;
}

/**
 * A cancel must not leave the torrent running: remove (or stop) it in the
 * client. If the client cannot be reached the cancel still stands — the poll
 * never resurrects a cancelled download from the torrent that was cancelled.
 */
async function cancelInClient(deps: DownloadsDeps, download: Download): Promise<void> {
  const policy = deps.cancel ?? { action: 'remove', deleteFiles: false };
  const ids = clientIds(download.infohashes);
  try {
    if (policy.action === 'stop') await deps.torrents.stop(ids);
    else await deps.torrents.remove(ids, { deleteFiles: policy.deleteFiles });
    deps.log.info('torrent_cancelled_in_client', { download_id: download.id, action: policy.action });
  } catch (err) {
    deps.log.warn('torrent_cancel_in_client_failed', { download_id: download.id, action: policy.action, err });
  }
}

/** The ids the client may know the torrent by: each v1 hash, each v2 hash truncated to 40 hex. */
export function clientIds(hashes: Infohash[]): string[] {
  return [...new Set(hashes.map((h) => (h.kind === 'v2' ? h.infohash.slice(0, 40) : h.infohash)))];
}

export async function addHashes(deps: DownloadsDeps, id: string, inputs: string[]): Promise<Download> {
  const download = await deps.store.addInfohashes(id, parseInfohashes(inputs));
  deps.log.info('download_infohashes_added', { download_id: id, infohashes: download.infohashes.length });
  return download;
}

export async function getDownload(deps: Pick<DownloadsDeps, 'store'>, id: string): Promise<Download> {
  return mustGet(deps.store, id);
}

export interface ListRequest {
  q?: string;
  state?: DownloadState;
  limit: number;
  cursor?: string;
}

export async function listDownloads(
  deps: Pick<DownloadsDeps, 'store'>,
  request: ListRequest,
): Promise<{ items: Download[]; cursor?: string }> {
  const page: ListPage = await deps.store.list({
    q: request.q,
    state: request.state,
    limit: request.limit,
    after: request.cursor ? decodeCursor(request.cursor) : undefined,
  });
  return { items: page.items, cursor: page.next ? encodeCursor(page.next) : undefined };
}

/** Cursors are opaque to clients and carry only an id: no key of ours is ever taken from outside. */
export function encodeCursor(afterId: string): string {
  return Buffer.from(`v1:${afterId}`).toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const id = text.startsWith('v1:') ? text.slice(3) : '';
  if (!isId(id)) throw new InvalidCursorError();
  return id;
}

function describeRequest(
  request: IngestRequest,
  options?: MagnetOptions,
): { hashes: Infohash[]; name: string; magnet?: string; torrentFile?: TorrentFile } {
  if ('torrent' in request) {
    const file = parseTorrentFile(request.torrent, options);
    const name = safeName(request.name?.trim()) ?? file.name;
    // Kept as the magnet of its hashes, name and trackers: a retry gives the client that (the file is not kept).
    return {
      hashes: file.infohashes,
      name,
      magnet: formatMagnet(file.infohashes, name, file.trackers),
      torrentFile: file,
    };
  }
  if ('magnet' in request) {
    const magnet = parseMagnet(request.magnet, options);
    return {
      hashes: magnet.infohashes,
      name: safeName(magnet.name) ?? magnet.infohashes[0].infohash,
      // Stored and sent as rebuilt from its fields, never as the caller wrote it (decision 290).
      magnet: clientMagnet(magnet),
    };
  }
  const hashes = parseInfohashes(request.infohashes);
  return { hashes, name: safeName(request.name?.trim()) ?? hashes[0].infohash };
}

/**
 * The magnet a retry gives the client: a stored one is parsed and rebuilt again (rows written before
 * decision 290, or by the legacy import, hold the caller's string); one that no longer parses is replaced
 * by the download's own hashes and name.
 */
function magnetOf(download: Download, options?: MagnetOptions): string {
  if (download.magnet) {
    try {
      // Under today's rules: a stored tracker on an internal host (a row older than them) drops the magnet's extras.
      return clientMagnet(parseMagnet(download.magnet, options));
    } catch (err) {
      if (!(err instanceof InvalidMagnetError)) throw err;
    }
  }
  return formatMagnet(download.infohashes, download.name);
}

// The torrent client saves under this name: the shared file-name rules apply (lib/names).
function safeName(name: string | undefined): string | undefined {
  return name ? validateName(name) : undefined;
}

async function mustGet(store: DownloadStore, id: string): Promise<Download> {
  const download = await store.get(id);
  if (!download) throw new DownloadNotFoundError(id);
  return download;
}

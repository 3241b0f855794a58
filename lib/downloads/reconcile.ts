import type { Logger } from '../log';
import type { TorrentClient, TorrentInfo } from '../torrents/client';
import { torrentHashes } from '../torrents/hashes';
import { mapClientState } from '../torrents/states';
import { Download, DownloadState, isActive } from './model';
import type { DownloadStore } from './store';

/**
 * The scheduled poll (DESIGN §3): make our downloads agree with the client.
 * Per torrent, independently (one bad torrent never stops the others):
 * - a torrent whose hashes have an active download: append the hashes it
 *   lacks and follow the client's state;
 * - none active, but a finished download had them and the torrent is alive:
 *   resurrect that download (the guard decides);
 * - never seen: adopt it as a new download.
 * The store's guarded operations decide every race with ingest and retry.
 */

export type Outcome = 'adopted' | 'resurrected' | 'updated' | 'unchanged' | 'skipped' | 'failed';

export interface ReconcileDeps {
  store: DownloadStore;
  torrents: TorrentClient;
  log: Logger;
}

export async function reconcile(deps: ReconcileDeps): Promise<Record<Outcome, number>> {
  const counts: Record<Outcome, number> = { adopted: 0, resurrected: 0, updated: 0, unchanged: 0, skipped: 0, failed: 0 };
  const torrents = await deps.torrents.list();
  for (const torrent of torrents) {
    let outcome: Outcome;
    try {
      outcome = await reconcileOne(deps, torrent);
    } catch (err) {
      deps.log.error('torrent_reconcile_failed', { torrent: torrent.name, hash: torrent.hash, err });
      outcome = 'failed';
    }
    counts[outcome]++;
  }
  deps.log.info('torrent_poll_done', { torrents: torrents.length, ...counts });
  return counts;
}

async function reconcileOne(deps: ReconcileDeps, torrent: TorrentInfo): Promise<Outcome> {
  const hashes = torrentHashes(torrent);
  if (hashes.length === 0) {
    deps.log.warn('torrent_without_valid_hash', { torrent: torrent.name, hash: torrent.hash });
    return 'skipped';
  }
  const state = mapClientState(torrent.state);
  if (!state) deps.log.warn('torrent_state_unknown', { torrent: torrent.name, client_state: torrent.state, infohash: hashes[0].infohash });
  const log = deps.log.child({ infohash: hashes[0].infohash });

  const owners = await Promise.all(hashes.map((h) => deps.store.findActiveByInfohash(h.infohash)));
  if (!owners.some(Boolean)) {
    const finished = await newestFinished(deps.store, hashes.map((h) => h.infohash));
    if (finished) {
      if (!state || !isActive(state)) return 'unchanged';
      await deps.store.activateIfNoOtherActive(finished.id, state);
      await deps.store.addInfohashes(finished.id, hashes);
      log.info('download_resurrected', { download_id: finished.id, from: finished.state, to: state });
      return 'resurrected';
    }
  }

  // Adopt, or dedup onto the active owner appending missing hashes (and merge a split hybrid).
  const { created, download } = await deps.store.createDownloadIfNoActive(
    { state: state && isActive(state) ? state : 'downloading', name: torrent.name, source_added_at: addedOn(torrent) },
    hashes,
  );
  if (created) log.info('download_adopted', { download_id: download.id, torrent: torrent.name });
  const followed = await follow(deps, download, state);
  if (created) return 'adopted';
  const appended = download.infohashes.length > (owners.find(Boolean)?.infohashes.length ?? 0);
  return followed || appended ? 'updated' : 'unchanged';
}

async function follow(deps: ReconcileDeps, download: Download, state: DownloadState | undefined): Promise<boolean> {
  if (!state || state === download.state) return false;
  await deps.store.setDownloadState(download.id, download.state, state);
  deps.log.info('download_state_followed', { download_id: download.id, from: download.state, to: state });
  return true;
}

async function newestFinished(store: DownloadStore, hashes: string[]): Promise<Download | undefined> {
  const histories = await Promise.all(hashes.map((h) => store.historyOfInfohash(h)));
  return histories
    .flat()
    .filter((d) => !isActive(d.state) && !d.merged_into)
    .sort((a, b) => (a.id < b.id ? 1 : -1))[0];
}

function addedOn(torrent: TorrentInfo): string | undefined {
  return Number.isFinite(torrent.added_on) && torrent.added_on > 0 ? new Date(torrent.added_on * 1000).toISOString() : undefined;
}

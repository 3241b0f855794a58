import type { DownloadState } from './model';

/**
 * qBittorrent torrent states → ours. An error in the client is `stuck`
 * (active, retryable), never a silent terminal `failed`; a torrent that is
 * seeding has finished downloading. `stalledDL` (no peer sends right now) is
 * `downloading`: the stall clock (lifecycle.ts) decides when it has waited too
 * long (decision 418). Unknown states map to nothing: the
 * poll reports an error for that torrent and writes nothing about it.
 */
const MAP: Record<string, DownloadState> = {
  queuedDL: 'queued',
  checkingResumeData: 'queued',
  allocating: 'downloading',
  downloading: 'downloading',
  metaDL: 'downloading',
  forcedMetaDL: 'downloading',
  forcedDL: 'downloading',
  checkingDL: 'downloading',
  moving: 'downloading',
  pausedDL: 'paused',
  stoppedDL: 'paused',
  stalledDL: 'downloading',
  error: 'stuck',
  missingFiles: 'stuck',
  uploading: 'completed',
  stalledUP: 'completed',
  pausedUP: 'completed',
  stoppedUP: 'completed',
  queuedUP: 'completed',
  forcedUP: 'completed',
  checkingUP: 'completed',
};

export function mapClientState(state: string): DownloadState | undefined {
  return Object.prototype.hasOwnProperty.call(MAP, state) ? MAP[state] : undefined;
}

/**
 * States in which the client does not know yet what it holds: it is reading
 * its resume data after a restart (real 4.5.2 reports a finished torrent as
 * `checkingResumeData` with progress 0 for about a second), or hashing the
 * files. Their state and progress are no news about the download: the poll
 * changes nothing on them (no follow, no resurrection, no adoption) and
 * waits for the state the check ends in, which sync/maindata reports as a change.
 */
const CHECKING = new Set(['checkingResumeData', 'checkingDL', 'checkingUP']);

export function isCheckingState(state: string): boolean {
  return CHECKING.has(state);
}

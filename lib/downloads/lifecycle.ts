import { parseIsoTime } from '../clock';
import { Env, EnvReader } from '../config/env';
import type { Download, FailureReason } from './model';

/**
 * The rules by which a download that does not move ends, as pure functions of
 * the download, the client's state and an injected `now` (epoch ms): the poll
 * (reconcile.ts) calls them on full updates and carries out the verdict with
 * the store's guarded writes. Nothing here reads or writes.
 *
 * The clock is `progress_at`: written by the poll in the same conditional
 * write as the progress it saw grow (or the metadata arriving, or the torrent
 * leaving a paused/queued state), by an activation (create, retry) and by
 * "keep waiting". It lives in the download's item, so a restart of the service
 * or of the client loses nothing (decision 415).
 */

export interface LifecycleSettings {
  /** A magnet whose metadata has not arrived this long is warned (0 = never). */
  metadataTimeoutS: number;
  /** A download with metadata whose bytes done have not grown this long is warned (0 = never). */
  stallTimeoutS: number;
  /** After the warning, this long before the download ends `failed` (0 = at once, no warning period). */
  graceS: number;
}

/** Decision 416. */
export const DEFAULT_LIFECYCLE: LifecycleSettings = { metadataTimeoutS: 3600, stallTimeoutS: 21600, graceS: 3600 };

/** The largest timeout a setting or a download may ask for: 30 days (decision 417). */
export const MAX_TIMEOUT_S = 30 * 24 * 3600;

/** DOWNLOAD_METADATA_TIMEOUT_S, DOWNLOAD_STALL_TIMEOUT_S, DOWNLOAD_TIMEOUT_GRACE_S (docs/downloads.md#settings). */
export function loadLifecycleSettings(env: Env = process.env): LifecycleSettings {
  const r = new EnvReader(env);
  const bounds = { min: 0, max: MAX_TIMEOUT_S };
  const settings = {
    metadataTimeoutS: r.int('DOWNLOAD_METADATA_TIMEOUT_S', { default: DEFAULT_LIFECYCLE.metadataTimeoutS, ...bounds }),
    stallTimeoutS: r.int('DOWNLOAD_STALL_TIMEOUT_S', { default: DEFAULT_LIFECYCLE.stallTimeoutS, ...bounds }),
    graceS: r.int('DOWNLOAD_TIMEOUT_GRACE_S', { default: DEFAULT_LIFECYCLE.graceS, ...bounds }),
  };
  r.done();
  return settings;
}

/**
 * What a client state means for the clocks: `metadata` (a magnet waiting for
 * its metadata), `transfer` (it should be moving bytes: `stalledDL` is here,
 * it is the very case the stall clock is for), or `exempt`: paused or stopped
 * by a person, queued by the client's own limits, checking or moving files,
 * in error (already `stuck`), or finished. Unknown states are exempt.
 */
export type Phase = 'metadata' | 'transfer' | 'exempt';

const METADATA = new Set(['metaDL', 'forcedMetaDL']);
const TRANSFER = new Set(['downloading', 'stalledDL', 'forcedDL', 'allocating']);
/** The metadata is known in these: a magnet's first sighting in one ends its metadata phase. */
const WITH_METADATA = new Set([...TRANSFER, 'uploading', 'stalledUP', 'pausedUP', 'stoppedUP', 'queuedUP', 'forcedUP']);

export function phaseOf(clientState: string): Phase {
  if (METADATA.has(clientState)) return 'metadata';
  if (TRANSFER.has(clientState)) return 'transfer';
  return 'exempt';
}

export function hasMetadata(clientState: string): boolean {
  return WITH_METADATA.has(clientState);
}

/**
 * A per-download override as stored or sent: an integer within 0..MAX_TIMEOUT_S,
 * else the setting (a stored value is read back through the same rule as the
 * API's, so a hostile or corrupted item never makes the clock negative or NaN).
 */
export function effectiveTimeout(override: unknown, setting: number): number {
  return typeof override === 'number' && Number.isInteger(override) && override >= 0 && override <= MAX_TIMEOUT_S
    ? override
    : setting;
}

export type TimeoutVerdict =
  | { action: 'none' }
  /** Warn now; `basis` is the progress_at the verdict counted from (the write is conditioned on it). */
  | { action: 'warn'; reason: FailureReason; basis: string }
  /** The grace is over: end it `failed` with this reason, while the same warning stands. */
  | { action: 'fail'; reason: FailureReason; warnedAt: string }
  /** A warning that no longer applies (paused, the phase changed, the timeout turned 0): clear it. */
  | { action: 'clear' };

/**
 * The verdict on one active download whose torrent the client holds in
 * `clientState`. Boundaries are inclusive (a timeout of 60 s warns at 60 s).
 * An unreadable clock never ends a download: it only delays the warning.
 * With a grace of 0 a timeout fails at once, without a warning period.
 */
export function judgeTimeout(
  download: Pick<
    Download,
    'state' | 'created_at' | 'progress_at' | 'warning' | 'warned_at' | 'metadata_timeout_s' | 'stall_timeout_s'
  >,
  clientState: string,
  settings: LifecycleSettings,
  now: number,
): TimeoutVerdict {
  const phase = download.state === 'downloading' ? phaseOf(clientState) : 'exempt';
  const reason: FailureReason = phase === 'metadata' ? 'no_metadata' : 'stalled';
  const limitS =
    phase === 'metadata'
      ? effectiveTimeout(download.metadata_timeout_s, settings.metadataTimeoutS)
      : effectiveTimeout(download.stall_timeout_s, settings.stallTimeoutS);
  const warned = download.warning !== undefined;
  if (phase === 'exempt' || limitS === 0 || (warned && download.warning !== reason))
    return warned ? { action: 'clear' } : { action: 'none' };
  const graceMs = effectiveTimeout(settings.graceS, DEFAULT_LIFECYCLE.graceS) * 1000;
  if (warned) {
    const since = parseIsoTime(download.warned_at);
    if (since === undefined) return { action: 'none' };
    return now - since >= graceMs ? { action: 'fail', reason, warnedAt: download.warned_at! } : { action: 'none' };
  }
  const basis = download.progress_at ?? download.created_at;
  const from = parseIsoTime(basis);
  if (from === undefined || now - from < limitS * 1000) return { action: 'none' };
  return { action: 'warn', reason, basis };
}

/** Whether a state the poll saw means the download made progress since `download` was written. */
export function madeProgress(
  download: Pick<Download, 'state' | 'progress' | 'metadata_at'>,
  clientState: string,
  progress: number | undefined,
): { progressed: boolean; metadataArrived: boolean } {
  const metadataArrived = !download.metadata_at && hasMetadata(clientState);
  const grew = progress !== undefined && progress > (download.progress ?? 0);
  // Out of a pause or the client's queue into transfer: the time it stood still was not a stall.
  const resumed = download.state !== 'downloading' && phaseOf(clientState) !== 'exempt';
  return { progressed: grew || metadataArrived || resumed, metadataArrived };
}

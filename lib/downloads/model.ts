/** A torrent's identity: v1 = SHA-1 (40 hex), v2 = SHA-256 (64 hex); parsed only by infohash.ts. */
export type InfohashKind = 'v1' | 'v2';

export interface Infohash {
  infohash: string;
  kind: InfohashKind;
}

/** Activity is a function of `state` only. */
export const ACTIVE_STATES = ['queued', 'downloading', 'paused', 'stuck'] as const;
export const TERMINAL_STATES = ['completed', 'failed', 'cancelled'] as const;
export type ActiveState = (typeof ACTIVE_STATES)[number];
export type TerminalState = (typeof TERMINAL_STATES)[number];
export type DownloadState = ActiveState | TerminalState;
export const DOWNLOAD_STATES: readonly DownloadState[] = [...ACTIVE_STATES, ...TERMINAL_STATES];

export function isActive(state: DownloadState): state is ActiveState {
  return (ACTIVE_STATES as readonly string[]).includes(state);
}

export function isDownloadState(value: unknown): value is DownloadState {
  return typeof value === 'string' && (DOWNLOAD_STATES as readonly string[]).includes(value);
}

/** The client's transfer figures (Transfer) are the download's own fields, written by the poll. */
export interface Download extends Transfer {
  id: string;
  state: DownloadState;
  name: string;
  magnet?: string;
  infohashes: Infohash[];
  created_at: string;
  updated_at: string;
  source_added_at?: string;
  /** Set when a hybrid ingest found this download and another holding the same torrent's other hash. */
  merged_into?: string;
  /** The torrent client's last known progress, 0..1 (written by the poll). */
  progress?: number;
  /** Why a person should look at it (set when the poll moved it aside, e.g. its torrent vanished from the client). */
  review_reason?: ReviewReason;
  /** When the poll first found no torrent for this active download (cleared when it shows up again). */
  missing_since?: string;
  /** When it was cancelled: only a torrent added to the client after this brings it back. */
  cancelled_at?: string;
  /** When it last made progress (bytes done grew, the metadata arrived, it was activated or resumed): the timeout clock (lifecycle.ts). */
  progress_at?: string;
  /** When the poll first saw the client hold its metadata (a magnet's phase ends). */
  metadata_at?: string;
  /** A timeout reached: the download ends `failed` with this reason after the grace unless it moves or a person keeps waiting. */
  warning?: FailureReason;
  /** When `warning` was set (the grace counts from here). */
  warned_at?: string;
  /** Why a timeout ended it (set with `failed`, cleared by a retry). */
  failure_reason?: FailureReason;
  /** Per-download overrides of DOWNLOAD_METADATA_TIMEOUT_S / DOWNLOAD_STALL_TIMEOUT_S (0 = never). */
  metadata_timeout_s?: number;
  stall_timeout_s?: number;
  /** Why the service paused its torrent (disk-guard.ts): resumed, and cleared, when the reason is gone. */
  hold?: HoldReason;
  /** When `hold` was set, and the figures it was set on: the bytes still to write, the free space then. */
  held_at?: string;
  hold_needed_bytes?: number;
  hold_free_bytes?: number;
  /** The seeding goal asked at creation (share-goals.ts): a ratio, seconds of seeding (0 = none), what then. */
  share_ratio?: number;
  share_time_s?: number;
  share_action?: ShareAction;
  /** When the poll first saw it completed with a goal: its own seeding clock (the client's may freeze). */
  seeding_since?: string;
  /** When the goal was met (or, without one, the download completed): the "seeding done" moment. */
  share_met_at?: string;
  /** The removal intended when the goal was met, written BEFORE the client is told (a crash is finished later). */
  share_removal?: ShareRemoval;
  /** When the torrent was removed from the client, and whether with its files. */
  removed_at?: string;
  removed_files?: boolean;
  /** Its sub-category in the client (category.ts), set at creation; absent: the default category. A retry re-adds in it. */
  category?: string;
  /** When the poll last wrote the client's transfer figures (the Transfer fields; transfer.ts, decision 408): "as of". */
  transfer_at?: string;
  /** Bumped by every write of the download: the CAS token of the store. */
  revision: number;
}

export const REVIEW_REASONS = ['missing_in_client'] as const;
export type ReviewReason = (typeof REVIEW_REASONS)[number];

/** Why a timeout ended a download (lifecycle.ts): no metadata arrived, or no progress was made. */
export const FAILURE_REASONS = ['no_metadata', 'stalled'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** Why the service paused a download's torrent: it would not fit on the disk beside the reserve. */
export const HOLD_REASONS = ['disk_space'] as const;
export type HoldReason = (typeof HOLD_REASONS)[number];

/** What happens when a seeding goal is met (share-goals.ts). */
export const SHARE_ACTIONS = ['keep', 'remove', 'remove_files'] as const;
export type ShareAction = (typeof SHARE_ACTIONS)[number];
export type ShareRemoval = Exclude<ShareAction, 'keep'>;

/** The seeding goal and where it stands (the DTO's `share`). */
export interface Share {
  ratio?: number;
  time_s?: number;
  action: ShareAction;
  seeding_since?: string;
  met_at?: string;
  removed_at?: string;
  removed_files?: boolean;
}

export interface Hold {
  reason: HoldReason;
  since: string;
  needed_bytes: number;
  free_bytes: number;
}

/** The client's figures of one torrent, sanitised (transfer.ts): bytes, bytes/s, seconds; each absent when unknown. */
export interface Transfer {
  size_bytes?: number;
  downloaded_bytes?: number;
  dl_speed?: number;
  up_speed?: number;
  eta_s?: number;
  seeds?: number;
  peers?: number;
  ratio?: number;
}

export const TRANSFER_KEYS = [
  'size_bytes',
  'downloaded_bytes',
  'dl_speed',
  'up_speed',
  'eta_s',
  'seeds',
  'peers',
  'ratio',
] as const satisfies ReadonlyArray<keyof Transfer>;

export interface NewDownload {
  state: ActiveState;
  name: string;
  magnet?: string;
  source_added_at?: string;
  progress?: number;
  metadata_timeout_s?: number;
  stall_timeout_s?: number;
  share_ratio?: number;
  share_time_s?: number;
  share_action?: ShareAction;
  category?: string;
}

/** Fields the poll keeps up to date without touching the state (null clears). */
export interface DownloadDetails {
  progress?: number;
  missing_since?: string | null;
  progress_at?: string;
  metadata_at?: string | null;
  /** Only cleared here (null): a warning is set by its own guarded write (DownloadStore.warnIfNoProgressSince). */
  warning?: null;
  /** Set when the disk guard pauses the torrent, null when it resumes it. */
  hold?: Hold | null;
  /** The client's figures, replacing the stored ones whole, `at` their time (transfer.ts). */
  transfer?: { figures: Transfer; at: string };
}

/** The API's view: no revision, no magnet (it may carry tracker passkeys). */
export interface DownloadDto {
  id: string;
  state: DownloadState;
  name: string;
  infohashes: Infohash[];
  created_at: string;
  updated_at: string;
  merged_into?: string;
  progress?: number;
  review_reason?: ReviewReason;
  progress_at?: string;
  warning?: { reason: FailureReason; since: string };
  failure_reason?: FailureReason;
  metadata_timeout_s?: number;
  stall_timeout_s?: number;
  hold?: Hold;
  share?: Share;
  category?: string;
  /** The client's figures and when the poll wrote them. */
  transfer?: Transfer & { at: string };
}

export function toDto(d: Download): DownloadDto {
  return {
    id: d.id,
    state: d.state,
    name: d.name,
    infohashes: d.infohashes.map(({ infohash, kind }) => ({ infohash, kind })),
    created_at: d.created_at,
    updated_at: d.updated_at,
    ...(d.merged_into ? { merged_into: d.merged_into } : {}),
    ...(d.progress !== undefined ? { progress: d.progress } : {}),
    ...(d.review_reason ? { review_reason: d.review_reason } : {}),
    ...(d.progress_at ? { progress_at: d.progress_at } : {}),
    ...(d.warning && d.warned_at ? { warning: { reason: d.warning, since: d.warned_at } } : {}),
    ...(d.failure_reason ? { failure_reason: d.failure_reason } : {}),
    ...(d.metadata_timeout_s !== undefined ? { metadata_timeout_s: d.metadata_timeout_s } : {}),
    ...(d.stall_timeout_s !== undefined ? { stall_timeout_s: d.stall_timeout_s } : {}),
    ...(holdOf(d) ? { hold: holdOf(d) } : {}),
    ...(d.transfer_at ? { transfer: { ...transferFields(d), at: d.transfer_at } } : {}),
    ...(d.category ? { category: d.category } : {}),
    ...(shareOf(d) ? { share: shareOf(d) } : {}),
  };
}

/** The seeding goal of a download that has one (or an action), and how far it went. */
export function shareOf(d: Download): Share | undefined {
  if (!d.share_action && d.share_ratio === undefined && !d.share_time_s && !d.removed_at && !d.share_met_at)
    return undefined;
  return {
    ...(d.share_ratio !== undefined ? { ratio: d.share_ratio } : {}),
    ...(d.share_time_s ? { time_s: d.share_time_s } : {}),
    action: d.share_action ?? d.share_removal ?? 'keep',
    ...(d.seeding_since ? { seeding_since: d.seeding_since } : {}),
    ...(d.share_met_at ? { met_at: d.share_met_at } : {}),
    ...(d.removed_at ? { removed_at: d.removed_at, removed_files: d.removed_files === true } : {}),
  };
}

/** The hold of an active download (a finished one's is history, not news). */
export function holdOf(d: Download): Hold | undefined {
  if (!d.hold || !d.held_at || !isActive(d.state)) return undefined;
  return {
    reason: d.hold,
    since: d.held_at,
    needed_bytes: d.hold_needed_bytes ?? 0,
    free_bytes: d.hold_free_bytes ?? 0,
  };
}

/** The figures the item holds (the download's own fields, copied by name). */
export function transferFields(d: Transfer): Transfer {
  const out: Transfer = {};
  for (const k of TRANSFER_KEYS) if (d[k] !== undefined) out[k] = d[k];
  return out;
}

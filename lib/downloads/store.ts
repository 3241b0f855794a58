import type { ShareStep } from './guards';
import type { Infohash } from './infohash';
import type {
  ActiveState,
  Download,
  DownloadDetails,
  DownloadState,
  FailureReason,
  NewDownload,
  ReviewReason,
} from './model';

/**
 * The downloads store. Every write is ONE conditional transaction; names say
 * the guard they enforce. Reads are for display and matching, never guards.
 */
export interface DownloadStore {
  /** Creates the download unless an active one owns any hash; else dedups onto that owner, appending the hashes it lacks. */
  createDownloadIfNoActive(input: NewDownload, hashes: Infohash[]): Promise<{ created: boolean; download: Download }>;
  /** Moves a download into the active set unless ANOTHER active download owns one of its hashes (ActiveExistsError). */
  activateIfNoOtherActive(id: string, to: ActiveState): Promise<Download>;
  /** Appends hashes; one owned by another active download is refused (InfohashTakenError). */
  addInfohashes(id: string, hashes: Infohash[]): Promise<Download>;
  /** CAS from `from`; refuses terminal → active (InvalidTransitionError). Leaving the active set may record a review reason. */
  setDownloadState(id: string, from: DownloadState, to: DownloadState, review?: ReviewReason): Promise<Download>;
  /** CAS on the revision: progress / missing_since only, never the state or a guard. */
  updateDetails(id: string, details: DownloadDetails): Promise<Download>;
  /** CAS: the timeout's warning, only while the download is active, unwarned and its clock still `basis` (else unchanged). */
  warnIfNoProgressSince(id: string, reason: FailureReason, basis: string): Promise<Download>;
  /** CAS: "keep waiting" clears the warning and restarts the clock once; without a warning it writes nothing. */
  keepWaiting(id: string): Promise<Download>;
  /** `failed` with the reason, guards released, only while the warning set at `warnedAt` stands (InvalidTransitionError). */
  failTimedOut(id: string, reason: FailureReason, warnedAt: string): Promise<Download>;
  /** CAS: a completed download's seeding goal one step on (guards.ts planShare; `met` twice is refused). */
  recordShare(id: string, step: ShareStep): Promise<Download>;
  /** The downloads whose seeding-goal removal was intended and not recorded done (a crash in between). */
  pendingShareRemovals(): Promise<string[]>;
  /** Drops a removal marker whose download no longer intends it (retried, or gone). */
  dropShareRemoval(id: string): Promise<void>;
  /** Every active download (the poll's missing-torrent check; reads the whole list index, so only on full resyncs). */
  listActive(): Promise<Download[]>;
  get(id: string): Promise<Download | undefined>;
  findActiveByInfohash(infohash: string): Promise<Download | undefined>;
  /** Every download that ever held the hash, newest first. */
  historyOfInfohash(infohash: string): Promise<Download[]>;
  list(query: ListQuery): Promise<ListPage>;
}

export interface ListQuery {
  /** Hex of 4+ chars: infohash prefix; anything else: case-insensitive name substring. */
  q?: string;
  /** Only downloads in this state. */
  state?: DownloadState;
  limit: number;
  /** Opaque: the id after which (older) to continue. */
  after?: string;
}

export interface ListPage {
  items: Download[];
  /** Id to pass as `after` for the next page; absent on the last page. */
  next?: string;
}

/** The writes of a legacy import (lib/downloads/legacy.ts), each its own guarded transaction. */
export interface LegacyImportStore {
  /**
   * Writes a download whose id the caller minted, with its legacy-id item, in
   * ONE transaction: a legacy id is imported at most once, whatever crashes or
   * runs in parallel. An active download whose hash another active download
   * owns is written `failed` instead (the owner stays active).
   */
  importDownloadIfNoActive(download: Download, legacyId: string): Promise<LegacyImportOutcome>;
  /** The same for rows with distinct hashes, in as few transactions as the limits allow; outcomes in row order. */
  importDownloadsIfNoActive(rows: Array<{ download: Download; legacyId: string }>): Promise<LegacyImportOutcome[]>;
  /** Every legacy id imported so far → its download id. */
  legacyImports(): Promise<Map<string, string>>;
  /** The time of the first import into this table (written once, then read back by every run). */
  legacyImportTime(now: number): Promise<number>;
}

/** The reads of the import's final consistency check (lib/downloads/legacy-check.ts): consistent, and only reads. */
export interface LegacyCheckStore {
  /** Every legacy id imported so far → its download id. */
  legacyImports(): Promise<Map<string, string>>;
  /** Downloads by id; an id without a download is absent from the map. */
  downloadsById(ids: string[]): Promise<Map<string, Download>>;
  /** Per hash, the download its guard names (a hash without a guard is absent). */
  guardsOf(hashes: string[]): Promise<Map<string, string>>;
  /** Per hash, every download that has a membership item for it. */
  membersOf(hashes: string[]): Promise<Map<string, string[]>>;
}

export type LegacyImportOutcome =
  | { outcome: 'imported'; download: Download }
  | { outcome: 'conflict'; download: Download; infohash: string; ownerId: string }
  | { outcome: 'already'; id: string }
  /** Only from the batch: this row's write failed (storage, an id taken); the others' outcomes stand. */
  | { outcome: 'error'; error: Error };

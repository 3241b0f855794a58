import type { Infohash } from './infohash';
import { FieldSpec, pickFields, readItem } from '../util/item';
import type { Download } from './model';

/**
 * Key design of the downloads table (the one place keys are written; docs/database.md),
 * and the items: each built from named fields, its keys written last so no field can choose them.
 *
 * item         PK               SK          GSI1 (list)        GSI2 (hash prefix)
 * download     DL#<id>          META        DL / <id>          -
 * membership   IH#<hash>        DL#<id>     -                  IHP#<hash[0]> / <hash>#<id>
 * guard        IH#<hash>        ACTIVE      -                  -
 * legacy id    LEGACY           ID#<old id, 20 digits>        -   (numeric id of an imported legacy row → its ULID)
 * legacy run   LEGACY           IMPORT      -                  -   (the first import's time, for rows whose time is unreadable)
 * disk         CLIENT_DISK      LAST        -                  -   (the poll's last look at the client's disk: disk-guard.ts)
 * removal      SHARE_REMOVAL    DL#<id>     -                  -   (a seeding goal's removal intended, not yet recorded done)
 * categories   CLIENT_CATEGORIES LAST       -                  -   (the client's categories under ours: category.ts)
 * (idempotency records of POST /downloads, IDEM#…/IDEM, are lib/idempotency/keys.ts's; TTL `expires_at`)
 *
 * Access patterns:
 * - get a download                     GetItem DL#<id>/META
 * - the active owner of a hash         GetItem IH#<hash>/ACTIVE (a read, never a guard)
 * - the downloads that ever had a hash Query PK=IH#<hash>, SK begins_with DL#
 * - list newest first                  Query GSI1 PK=DL, descending (ULIDs sort by time)
 * - search by hash prefix              Query GSI2 PK=IHP#<first hex>, SK begins_with <prefix>
 * - the ULID of a legacy numeric id    GetItem LEGACY/ID#<old id> (written in the download's own transaction)
 * - every imported legacy id, in order Query PK=LEGACY, SK begins_with ID# (a re-run skips them)
 * - the disk as the poll last saw it   GetItem CLIENT_DISK/LAST (the deep healthcheck)
 * - removals to finish after a crash   Query PK=SHARE_REMOVAL (usually empty; the poll, on full updates)
 * - the categories the add form lists  GetItem CLIENT_CATEGORIES/LAST
 *
 * Uniqueness of "the active download of a hash" is the guard item, written in
 * the same transaction as every transition into or out of the active set.
 */

export const LIST_INDEX = 'GSI1';
export const PREFIX_INDEX = 'GSI2';
export const LIST_PARTITION = 'DL';

export const downloadKey = (id: string) => ({ PK: `DL#${id}`, SK: 'META' });
export const DOWNLOAD_ENTITY = 'download';
/** True for a download's own item (not a membership, guard or legacy item), e.g. in a stream image. */
export const isDownloadItem = (item: Record<string, unknown>): boolean =>
  item.SK === 'META' && item.entity === DOWNLOAD_ENTITY && typeof item.PK === 'string' && item.PK.startsWith('DL#');
/** Memberships of a hash sort under this prefix (beside its guard, `ACTIVE`). */
export const MEMBERSHIP_SORT_PREFIX = 'DL#';
export const membershipKey = (infohash: string, id: string) => ({
  PK: `IH#${infohash}`,
  SK: `${MEMBERSHIP_SORT_PREFIX}${id}`,
});
export const guardKey = (infohash: string) => ({ PK: `IH#${infohash}`, SK: 'ACTIVE' });
export const infohashPartition = (infohash: string) => `IH#${infohash}`;

export const listIndexKeys = (id: string) => ({ GSI1PK: LIST_PARTITION, GSI1SK: id });
export const prefixIndexKeys = (infohash: string, id: string) => ({
  GSI2PK: prefixShard(infohash),
  GSI2SK: `${infohash}#${id}`,
});
export const prefixShard = (hexPrefix: string) => `IHP#${hexPrefix[0]}`;

/** A legacy id is a positive 64-bit integer in canonical decimal; zero-padded so the partition sorts by old id. */
export const LEGACY_PARTITION = 'LEGACY';
export const LEGACY_ID_PREFIX = 'ID#';
export const LEGACY_ID_PATTERN = /^[1-9][0-9]{0,18}$/;
export function legacyIdKey(legacyId: string) {
  if (!LEGACY_ID_PATTERN.test(legacyId)) throw new RangeError(`not a legacy id: ${JSON.stringify(legacyId)}`);
  return { PK: LEGACY_PARTITION, SK: `${LEGACY_ID_PREFIX}${legacyId.padStart(20, '0')}` };
}
export const legacyIdFromSortKey = (sk: string) => sk.slice(LEGACY_ID_PREFIX.length).replace(/^0+/, '');
export const LEGACY_IMPORT_KEY = { PK: LEGACY_PARTITION, SK: 'IMPORT' };
export const DISK_RECORD_KEY = { PK: 'CLIENT_DISK', SK: 'LAST' };
export const CATEGORY_RECORD_KEY = { PK: 'CLIENT_CATEGORIES', SK: 'LAST' };

/** A seeding goal's removal intended (share-goals.ts): written with the intent, deleted with its record. */
export const SHARE_REMOVAL_PARTITION = 'SHARE_REMOVAL';
export const shareRemovalKey = (id: string) => ({ PK: SHARE_REMOVAL_PARTITION, SK: `DL#${id}` });
export function shareRemovalItem(id: string, since: string): Record<string, unknown> {
  return { entity: 'share-removal', download_id: id, since, ...shareRemovalKey(id) };
}
const SHARE_REMOVAL_FIELDS: FieldSpec<{ download_id: string }> = { download_id: 'string' };
export const shareRemovalFromItem = (item: Record<string, unknown>): string =>
  readItem(SHARE_REMOVAL_FIELDS, item, 'share-removal').download_id;

/** The fields of a download: what its item is written from and read back through. */
const DOWNLOAD_FIELDS: FieldSpec<Download> = {
  id: 'string',
  state: 'string',
  name: 'string',
  magnet: 'string?',
  infohashes: 'array',
  created_at: 'string',
  updated_at: 'string',
  source_added_at: 'string?',
  merged_into: 'string?',
  progress: 'number?',
  review_reason: 'string?',
  missing_since: 'string?',
  cancelled_at: 'string?',
  progress_at: 'string?',
  metadata_at: 'string?',
  warning: 'string?',
  warned_at: 'string?',
  failure_reason: 'string?',
  metadata_timeout_s: 'number?',
  stall_timeout_s: 'number?',
  hold: 'string?',
  held_at: 'string?',
  hold_needed_bytes: 'number?',
  hold_free_bytes: 'number?',
  share_ratio: 'number?',
  share_time_s: 'number?',
  share_action: 'string?',
  seeding_since: 'string?',
  share_met_at: 'string?',
  share_removal: 'string?',
  removed_at: 'string?',
  removed_files: 'boolean?',
  category: 'string?',
  size_bytes: 'number?',
  downloaded_bytes: 'number?',
  dl_speed: 'number?',
  up_speed: 'number?',
  eta_s: 'number?',
  seeds: 'number?',
  peers: 'number?',
  ratio: 'number?',
  transfer_at: 'string?',
  revision: 'number',
};

/** A download's item: its named fields (nothing else a caller's object carries), then its keys. */
export function downloadToItem(d: Download): Record<string, unknown> {
  return {
    ...pickFields(DOWNLOAD_FIELDS, d),
    entity: DOWNLOAD_ENTITY,
    name_lc: d.name.toLowerCase(),
    ...downloadKey(d.id),
    ...listIndexKeys(d.id),
  };
}

export function downloadFromItem(item: Record<string, unknown>): Download {
  return readItem(DOWNLOAD_FIELDS, item, DOWNLOAD_ENTITY);
}

/**
 * The hash records (a hash's memberships and its guard) carry `created_at`: when the record came to be, written
 * by the write that creates it and kept by every later one (HASH_RECORD_KEPT: the store writes these puts as
 * updates that set it only where it is missing). Items written before it existed have none and read as before.
 */
export const HASH_RECORD_KEPT = ['created_at'] as const;

export function membershipItem(h: Infohash, id: string, at: string): Record<string, unknown> {
  return {
    entity: 'membership',
    download_id: id,
    infohash: h.infohash,
    kind: h.kind,
    created_at: at,
    ...membershipKey(h.infohash, id),
    ...prefixIndexKeys(h.infohash, id),
  };
}

export function guardItem(infohash: string, id: string, since: string): Record<string, unknown> {
  return { entity: 'guard', download_id: id, infohash, since, created_at: since, ...guardKey(infohash) };
}

/** A guard as read: the hash and the active download holding it. */
export interface Guard {
  infohash: string;
  download_id: string;
  since?: string;
  /** When the guard item was written first (absent on items older than the field). */
  created_at?: string;
}
const GUARD_FIELDS: FieldSpec<Guard> = {
  infohash: 'string',
  download_id: 'string',
  since: 'string?',
  created_at: 'string?',
};
export const guardFromItem = (item: Record<string, unknown>): Guard => readItem(GUARD_FIELDS, item, 'guard');

/**
 * A membership as read, whole or through the prefix index (which projects
 * `download_id` only): the download that held the hash of its key.
 */
export interface Membership {
  download_id: string;
  /** When the membership was written first (absent on items older than the field, and through the index). */
  created_at?: string;
}
const MEMBERSHIP_FIELDS: FieldSpec<Membership> = { download_id: 'string', created_at: 'string?' };
export const membershipFromItem = (item: Record<string, unknown>): Membership =>
  readItem(MEMBERSHIP_FIELDS, item, 'membership');

export function legacyIdItem(legacyId: string, downloadId: string): Record<string, unknown> {
  return { entity: 'legacy-id', legacy_id: legacyId, download_id: downloadId, ...legacyIdKey(legacyId) };
}

/** A legacy-id item as read: the old numeric id and the download it became. */
export interface LegacyId {
  legacy_id: string;
  download_id: string;
}
const LEGACY_ID_FIELDS: FieldSpec<LegacyId> = { legacy_id: 'string', download_id: 'string' };
export const legacyIdFromItem = (item: Record<string, unknown>): LegacyId =>
  readItem(LEGACY_ID_FIELDS, item, 'legacy-id');

export function legacyImportItem(startedAt: string): Record<string, unknown> {
  return { entity: 'legacy-import', started_at: startedAt, ...LEGACY_IMPORT_KEY };
}

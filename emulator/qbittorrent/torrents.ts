import { randomBytes } from 'node:crypto';

/**
 * The emulated client's torrents, and the change log sync/maindata answers
 * from. Torrents mirror what a real client reports: a v2-only (or hybrid with
 * metadata) torrent's `hash` is its v2 hash truncated to 40 hex; a legacy
 * torrent has only `hash` (no infohash_v1/v2 fields).
 */

export type TorrentKind = 'v1' | 'v2' | 'hybrid' | 'legacy';

export interface NewTorrent {
  kind: TorrentKind;
  name?: string;
  state?: string;
  progress?: number;
  infohash_v1?: string;
  infohash_v2?: string;
  category?: string;
  tags?: string;
  /** Where its files go, and whether it is in automatic management (the category's save path). */
  save_path?: string;
  auto_tmm?: boolean;
  /** false: a hybrid known only by its v1 hash until metadata arrives (as after a btih-only magnet). */
  metadata?: boolean;
  /** The share limits asked on add (`ratioLimit`; `seedingTimeLimit` in minutes): -2 = the global ones. */
  ratio_limit?: number;
  seeding_time_limit?: number;
}

/** What torrents/info answers for one torrent (a subset of the ~50 real fields). */
export interface EmulatedTorrent {
  hash: string;
  infohash_v1?: string;
  infohash_v2?: string;
  name: string;
  state: string;
  progress: number;
  added_on: number;
  category: string;
  tags: string;
  save_path: string;
  auto_tmm: boolean;
  has_metadata: boolean;
  magnet_uri: string;
  /** Uploaded / downloaded, and the seconds seeded, as the real one reports them (a test sets them by PATCH). */
  ratio: number;
  seeding_time: number;
  /** -2: the global limit; -1: none (torrents/setShareLimits, torrents/add). Minutes for the time. */
  ratio_limit: number;
  seeding_time_limit: number;
  [field: string]: unknown;
}

export interface Tracked {
  torrent: EmulatedTorrent;
  /** rid at which each field last changed; `created` = rid of its (re)appearance under this id. */
  changed: Map<string, number>;
  created: number;
  /** The v2 hash a hybrid reveals when its metadata arrives. */
  hiddenV2?: string;
}

/** qBittorrent's ETA when it cannot tell (torrent.h MAX_ETA, 100 days). */
export const INFINITE_ETA_S = 8_640_000;

/**
 * What a real client reports with a new progress: the bytes done and left follow it (over `size`, once known), a
 * finished torrent has no ETA to wait and no download speed; each unless the patch sets it itself.
 */
function derived(t: EmulatedTorrent, patch: Partial<EmulatedTorrent>): Partial<EmulatedTorrent> {
  const progress = patch.progress;
  const size = typeof patch.size === 'number' ? patch.size : t.size;
  if (typeof progress !== 'number' || typeof size !== 'number' || !(progress >= 0 && progress <= 1)) return {};
  const downloaded = Math.round(size * progress);
  return {
    downloaded,
    amount_left: size - downloaded,
    ...(progress === 1 ? { dlspeed: 0, eta: 0 } : {}),
  };
}

/** Removals remembered for maindata; older rids get a full update. */
const HISTORY = 10_000;

export class TorrentTable {
  readonly tracked = new Map<string, Tracked>();
  removed: Array<{ id: string; rid: number }> = [];
  /** Every change takes the next rid. */
  rid = 0;
  /** A rid older than this has lost its history: a full update. */
  oldestRid = 0;
  /** server_state.free_space_on_disk, and the rid it last changed at (sent in a delta after that). */
  freeSpace = 1024 ** 4;
  freeSpaceRid = 0;

  setFreeSpace(bytes: number): void {
    this.freeSpace = bytes;
    this.freeSpaceRid = ++this.rid;
  }

  /** `stateName` names a state as the current profile does. */
  constructor(private readonly stateName: (state: string) => string) {}

  add(spec: NewTorrent): EmulatedTorrent {
    const v1 = spec.infohash_v1 ?? randomBytes(20).toString('hex');
    const v2 = spec.infohash_v2 ?? randomBytes(32).toString('hex');
    const pendingHybrid = spec.kind === 'hybrid' && spec.metadata === false;
    const hashes: Record<TorrentKind, Pick<EmulatedTorrent, 'hash' | 'infohash_v1' | 'infohash_v2'>> = {
      v1: { hash: v1, infohash_v1: v1, infohash_v2: '' },
      v2: { hash: v2.slice(0, 40), infohash_v1: '', infohash_v2: v2 },
      hybrid: pendingHybrid
        ? { hash: v1, infohash_v1: v1, infohash_v2: '' }
        : { hash: v2.slice(0, 40), infohash_v1: v1, infohash_v2: v2 },
      legacy: { hash: v1 },
    };
    const h = hashes[spec.kind];
    const torrent: EmulatedTorrent = {
      ...h,
      name: spec.name ?? `torrent-${h.hash.slice(0, 8)}`,
      state: this.stateName(spec.state ?? 'downloading'),
      progress: spec.progress ?? 0,
      added_on: Math.floor(Date.now() / 1000),
      category: spec.category ?? '',
      tags: spec.tags ?? '',
      save_path: spec.save_path ?? '/downloads',
      auto_tmm: spec.auto_tmm ?? false,
      has_metadata: spec.metadata !== false,
      magnet_uri: `magnet:?xt=urn:btih:${h.hash}`,
      // The transfer figures as a torrent without peers reports them (serialize_torrent.cpp); eta 8640000 is
      // qBittorrent's MAX_ETA, its "never".
      downloaded: 0,
      dlspeed: 0,
      upspeed: 0,
      eta: INFINITE_ETA_S,
      num_seeds: 0,
      num_leechs: 0,
      ratio: 0,
      seeding_time: 0,
      ratio_limit: spec.ratio_limit ?? -2,
      seeding_time_limit: spec.seeding_time_limit ?? -2,
    };
    this.put(torrent, pendingHybrid ? v2 : undefined);
    return torrent;
  }

  /** Changes fields of a torrent, recorded for maindata. */
  update(hash: string, patch: Partial<EmulatedTorrent>): EmulatedTorrent | undefined {
    const t = this.tracked.get(hash);
    if (!t) return undefined;
    const rid = ++this.rid;
    for (const [field, value] of Object.entries({ ...derived(t.torrent, patch), ...patch })) {
      if (value === undefined || field === 'hash') continue;
      if (t.torrent[field] !== value) {
        t.torrent[field] = field === 'state' ? this.stateName(value as string) : value;
        t.changed.set(field, rid);
      }
    }
    return t.torrent;
  }

  /** Metadata arrives: a hybrid reveals its v2 hash, and its id becomes the v2 hash truncated to 40 hex. */
  metadataArrives(hash: string, infohashV2?: string): EmulatedTorrent | undefined {
    const t = this.tracked.get(hash);
    if (!t) return undefined;
    const v2 = infohashV2 ?? t.hiddenV2;
    if (!v2) {
      this.update(hash, { has_metadata: true });
      return t.torrent;
    }
    this.remove(hash);
    const torrent = { ...t.torrent, hash: v2.slice(0, 40), infohash_v2: v2, has_metadata: true };
    this.put(torrent);
    return torrent;
  }

  remove(hash: string): boolean {
    if (!this.tracked.delete(hash)) return false;
    this.removed.push({ id: hash, rid: ++this.rid });
    if (this.removed.length > HISTORY) this.oldestRid = this.removed.shift()!.rid;
    return true;
  }

  clear(): void {
    for (const id of [...this.tracked.keys()]) this.remove(id);
  }

  /** Finds a torrent holding either hash (a duplicate add). */
  holding(v1: string | undefined, v2: string | undefined): boolean {
    return [...this.tracked.values()].some(
      ({ torrent: t }) => (v1 && (t.infohash_v1 === v1 || t.hash === v1)) || (v2 && t.infohash_v2 === v2),
    );
  }

  private put(torrent: EmulatedTorrent, hiddenV2?: string): void {
    const rid = ++this.rid;
    this.tracked.set(torrent.hash, { torrent, changed: new Map(), created: rid, hiddenV2 });
  }
}

/** What a torrent client tells us (qBittorrent Web API v2 shape). */

export interface TorrentInfo {
  /**
   * The client's torrent id: the v1 hash, or the v2 hash TRUNCATED to 40 hex
   * (v2-only torrents, and hybrids once their metadata is known). Never stored.
   */
  hash: string;
  /** `""` while unknown (a hybrid added by a btih-only magnet has no v2 before its metadata); absent on old APIs. */
  infohash_v1?: string;
  infohash_v2?: string;
  name: string;
  state: string;
  progress: number;
  /** Unix seconds. */
  added_on: number;
  category?: string;
  /** qBittorrent joins them with ", ". */
  tags?: string;
  /** Bytes of the files selected for download (0 until the metadata is known). */
  size?: number;
  /** Bytes of `size` still to download: what the torrent will still write to the disk. */
  amount_left?: number;
  /** The transfer figures (lib/downloads/transfer.ts sanitises them): bytes, bytes/s, seconds (8640000: never). */
  downloaded?: number;
  dlspeed?: number;
  upspeed?: number;
  eta?: number;
  num_seeds?: number;
  num_leechs?: number;
  ratio?: number;
  /** Seconds it has seeded, by the client's count (qBittorrent 4.5's idle seed freezes it). */
  seeding_time?: number;
}

/**
 * One read of the client. `changed` is what the poll must look at: every
 * torrent on a full update, otherwise only those with a change since the last
 * read (sync/maindata rid). `present` is every torrent in scope, always.
 */
export interface TorrentSnapshot {
  full: boolean;
  changed: TorrentInfo[];
  present: TorrentInfo[];
  /** The client's `server_state.free_space_on_disk` (its default save path), last known; absent until it said one. */
  free_space_bytes?: number;
}

export interface AddOptions {
  /** Tags for the torrent (the download id). */
  tags?: string[];
  /**
   * A .torrent file to add instead of the magnet (sent as the multipart `torrents` part); the magnet, built from
   * the same file's hashes, still finds it in the client after a `Fails.`/409.
   */
  torrentFile?: Uint8Array;
  /** The torrent's name in the client (qBittorrent's `rename`), with a torrentFile. */
  rename?: string;
  /** The seeding goal (qBittorrent's `ratioLimit`; `seedingTimeLimit` in whole minutes). */
  ratioLimit?: number;
  seedingTimeLimit?: number;
  /**
   * A sub-category of the configured one (lib/downloads/category.ts) instead of it: sent with `autoTMM=true`, so
   * the client saves under the category's save path. Absent: the configured category, in the client's default mode.
   */
  category?: string;
}

/** A category as torrents/categories lists it: its save path as the client stores it ("" = the client's own rule). */
export interface TorrentCategory {
  name: string;
  savePath: string;
}

/** Whether a category is in the product's tree: the configured one itself, or a sub-category under `root/`. */
export function inCategoryTree(root: string, category: string | undefined): boolean {
  return category === root || (typeof category === 'string' && category.startsWith(`${root}/`));
}

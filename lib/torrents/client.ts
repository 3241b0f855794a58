import type { AddOptions, TorrentCategory, TorrentSnapshot } from './model';

/** What the downloads domain needs of a torrent client: the port its services are written against. */
export interface TorrentClient {
  /** Torrents in scope (the configured category unless adopting all), changes since the last call of this container. */
  snapshot(): Promise<TorrentSnapshot>;
  /** Adds a magnet under the configured category; a torrent already present (by any hash) counts as added. */
  add(magnet: string, options?: AddOptions): Promise<void>;
  /** Removes torrents by their client ids or hashes. */
  remove(hashes: string[], options?: { deleteFiles?: boolean }): Promise<void>;
  /**
   * Removes those of the torrents that are in the configured category, read again at the moment of the call
   * (a torrent a person added, or moved to another category, is never touched); answers the ids removed.
   */
  removeOwn(hashes: string[], options: { deleteFiles: boolean }): Promise<string[]>;
  /** A torrent's own share limits (qBittorrent's ratio, and seeding time in MINUTES; absent: the client's global ones). */
  setShareLimits(hashes: string[], limits: { ratioLimit?: number; seedingTimeLimit?: number }): Promise<void>;
  /** Stops (pauses on 4.x) torrents. */
  stop(hashes: string[]): Promise<void>;
  /** Starts (resumes on 4.x) stopped torrents. */
  start(hashes: string[]): Promise<void>;
  /** The configured category: the root of the product's tree (lib/downloads/category.ts). */
  readonly category: string;
  /** Every category of the client (torrents/categories), by name. */
  categories(): Promise<Map<string, TorrentCategory>>;
  /** Creates a category (torrents/createCategory); false when the client already has one of that name (its 409). */
  createCategory(name: string, savePath: string): Promise<boolean>;
}

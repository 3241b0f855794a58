/** What the downloads domain needs of a torrent client (qBittorrent Web API v2 shape). */

export interface TorrentInfo {
  /** v1 hash; for a v2-only torrent, the v2 hash TRUNCATED to 40 hex (never store it). */
  hash: string;
  infohash_v1?: string;
  infohash_v2?: string;
  name: string;
  state: string;
  progress: number;
  /** Unix seconds. */
  added_on: number;
}

export interface TorrentClient {
  list(): Promise<TorrentInfo[]>;
  add(magnet: string): Promise<void>;
  remove(hashes: string[]): Promise<void>;
}

export class TorrentClientError extends Error {
  readonly code = 'TORRENT_CLIENT_ERROR';
  constructor(message: string, readonly status?: number) {
    super(message);
    this.name = 'TorrentClientError';
  }
}

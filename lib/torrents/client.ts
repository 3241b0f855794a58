import { DomainError } from '../errors';

/** What the downloads domain needs of a torrent client (qBittorrent Web API v2 shape). */

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
}

export interface AddOptions {
  /** Tags for the torrent (the download id). */
  tags?: string[];
}

export interface TorrentClient {
  /** Torrents in scope (the configured category unless adopting all), changes since the last call of this container. */
  snapshot(): Promise<TorrentSnapshot>;
  /** Adds a magnet under the configured category; a torrent already present (by any hash) counts as added. */
  add(magnet: string, options?: AddOptions): Promise<void>;
  /** Removes torrents by their client ids or hashes. */
  remove(hashes: string[], options?: { deleteFiles?: boolean }): Promise<void>;
  /** Stops (pauses on 4.x) torrents. */
  stop(hashes: string[]): Promise<void>;
}

/** The torrent client failed us: a 502 to our callers; `upstreamStatus` is what the client answered, if anything. */
export class TorrentClientError extends DomainError {
  readonly code: string = 'TORRENT_CLIENT_ERROR';
  readonly status = 502;
  constructor(
    message: string,
    readonly upstreamStatus?: number,
  ) {
    super(message);
  }
}

/** The client refused our credentials (`Fails.`, 401, an unknown API key) or banned our address (403). */
export class TorrentClientAuthError extends TorrentClientError {
  override readonly code = 'TORRENT_CLIENT_AUTH';
}

/** The client's Web API is older than the oldest one we support. */
export class TorrentClientVersionError extends TorrentClientError {
  override readonly code = 'TORRENT_CLIENT_VERSION';
  constructor(
    readonly found: string,
    readonly minimum: string,
  ) {
    super(`qBittorrent Web API ${found} is older than ${minimum}, the oldest this service supports`);
  }
}

/** torrents/add refused the torrent, and it is not in the client. */
export class TorrentAddRefusedError extends TorrentClientError {
  override readonly code = 'TORRENT_ADD_REFUSED';
  constructor(detail: string, status?: number) {
    super(`torrents/add refused the torrent: ${detail}`, status);
  }
}

/** An answer we cannot read (HTML, truncated JSON, a wrong shape). */
export class TorrentClientAnswerError extends TorrentClientError {
  override readonly code = 'TORRENT_CLIENT_ANSWER';
}

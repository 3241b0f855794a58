import { isoTime } from '../clock';
import { DomainError, type ErrorCode } from '../errors';

/** Typed failures of the torrent client; callers branch on the class. */

/** The torrent client failed us: a 502 to our callers; `upstreamStatus` is what the client answered, if anything. */
export class TorrentClientError extends DomainError {
  readonly code: ErrorCode = 'TORRENT_CLIENT_ERROR';
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
  override readonly code: ErrorCode = 'TORRENT_CLIENT_AUTH';
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

/** The gate is closed: no login is tried before `nextTryAt`. */
export class TorrentLoginDeferredError extends TorrentClientAuthError {
  override readonly code = 'TORRENT_CLIENT_LOGIN_DEFERRED';
  constructor(
    readonly nextTryAt: number,
    readonly refusals: number,
    reason: 'refused' | 'banned',
  ) {
    super(
      reason === 'banned'
        ? `the client banned this address; next try at ${isoTime(nextTryAt)}`
        : `credentials refused, next try at ${isoTime(nextTryAt)} (${refusals} refused login${refusals === 1 ? '' : 's'}: check TORRENT_CLIENT_USERNAME / TORRENT_CLIENT_PASSWORD)`,
    );
  }
}

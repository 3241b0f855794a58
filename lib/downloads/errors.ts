import { DomainError } from '../errors';
import type { DownloadState } from './model';

/** Typed refusals of the downloads store; callers branch on the class. */

export class DownloadNotFoundError extends DomainError {
  readonly code = 'NOT_FOUND';
  readonly status = 404;
  constructor(readonly downloadId: string) {
    super(`download ${downloadId} not found`);
  }
}

/** Both guard refusals name the active owner of the hash (a 409 links to it). */
abstract class OwnedHashError extends DomainError {
  readonly status = 409;
  constructor(
    readonly infohash: string,
    readonly ownerId: string,
    message: string,
  ) {
    super(message, { owner_id: ownerId, infohash });
  }
}

/** A hash of the call belongs to ANOTHER active download. */
export class InfohashTakenError extends OwnedHashError {
  readonly code = 'INFOHASH_TAKEN';
  constructor(infohash: string, ownerId: string) {
    super(infohash, ownerId, `infohash ${infohash} belongs to active download ${ownerId}`);
  }
}

/** Activation refused: another download is active for one of the hashes. */
export class ActiveExistsError extends OwnedHashError {
  readonly code = 'ACTIVE_EXISTS';
  constructor(infohash: string, ownerId: string) {
    super(infohash, ownerId, `download ${ownerId} is already active for infohash ${infohash}`);
  }
}

export class InvalidTransitionError extends DomainError {
  readonly code = 'INVALID_TRANSITION';
  readonly status = 409;
  constructor(
    readonly downloadId: string,
    readonly current: DownloadState,
    readonly requested: DownloadState,
    reason: string,
  ) {
    super(`download ${downloadId}: ${current} → ${requested} refused: ${reason}`, { state: current });
  }
}

export class TooManyInfohashesError extends DomainError {
  readonly code = 'TOO_MANY_INFOHASHES';
  readonly status = 400;
  constructor(
    readonly downloadId: string,
    max: number,
  ) {
    super(`download ${downloadId} would hold more than ${max} infohashes`);
  }
}

/** A review's candidate must share a hash with the download under review. */
export class NotACandidateError extends DomainError {
  readonly code = 'NOT_A_CANDIDATE';
  readonly status = 409;
  constructor(downloadId: string, candidateId: string) {
    super(`download ${candidateId} shares no infohash with ${downloadId}`, { candidate_id: candidateId });
  }
}

export class InvalidMagnetError extends DomainError {
  readonly code = 'INVALID_MAGNET';
  readonly status = 400;
}

/** A .torrent file refused: not bencode, malformed, inconsistent, or naming a path or host it must not. */
export class InvalidTorrentError extends DomainError {
  readonly code = 'INVALID_TORRENT';
  readonly status = 400;
}

export class InvalidCursorError extends DomainError {
  readonly code = 'INVALID_REQUEST';
  readonly status = 400;
  constructor() {
    super('cursor is not one this API issued');
  }
}

export class InvalidInfohashError extends DomainError {
  readonly code = 'INVALID_INFOHASH';
  readonly status = 400;
}

/** A torrent whose answer we cannot use (unknown state, progress out of range). */
export class TorrentAnswerInvalidError extends Error {
  readonly code = 'TORRENT_ANSWER_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'TorrentAnswerInvalidError';
  }
}

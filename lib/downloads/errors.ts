import type { DownloadState } from './model';

/** Typed refusals of the downloads store; callers branch on the class. */

export class DownloadNotFoundError extends Error {
  readonly code = 'NOT_FOUND';
  constructor(readonly downloadId: string) {
    super(`download ${downloadId} not found`);
    this.name = 'DownloadNotFoundError';
  }
}

/** A hash of the call belongs to ANOTHER active download. */
export class InfohashTakenError extends Error {
  readonly code = 'INFOHASH_TAKEN';
  constructor(readonly infohash: string, readonly ownerId: string) {
    super(`infohash ${infohash} belongs to active download ${ownerId}`);
    this.name = 'InfohashTakenError';
  }
}

/** Activation refused: another download is active for one of the hashes. */
export class ActiveExistsError extends Error {
  readonly code = 'ACTIVE_EXISTS';
  constructor(readonly infohash: string, readonly ownerId: string) {
    super(`download ${ownerId} is already active for infohash ${infohash}`);
    this.name = 'ActiveExistsError';
  }
}

export class InvalidTransitionError extends Error {
  readonly code = 'INVALID_TRANSITION';
  constructor(readonly downloadId: string, readonly current: DownloadState, readonly requested: DownloadState, reason: string) {
    super(`download ${downloadId}: ${current} → ${requested} refused: ${reason}`);
    this.name = 'InvalidTransitionError';
  }
}

export class TooManyInfohashesError extends Error {
  readonly code = 'TOO_MANY_INFOHASHES';
  constructor(readonly downloadId: string, max: number) {
    super(`download ${downloadId} would hold more than ${max} infohashes`);
    this.name = 'TooManyInfohashesError';
  }
}

/** A review's candidate must share a hash with the download under review. */
export class NotACandidateError extends Error {
  readonly code = 'NOT_A_CANDIDATE';
  constructor(readonly downloadId: string, readonly candidateId: string) {
    super(`download ${candidateId} shares no infohash with ${downloadId}`);
    this.name = 'NotACandidateError';
  }
}

import { ActiveExistsError, InfohashTakenError, InvalidTransitionError, TooManyInfohashesError } from './errors';
import { Infohash, MAX_INFOHASHES, sortHashes } from './infohash';
import {
  downloadToItem,
  guardItem,
  guardKey,
  HASH_RECORD_KEPT,
  legacyIdItem,
  membershipItem,
  shareRemovalItem,
  shareRemovalKey,
} from './keys';
import {
  ActiveState,
  Download,
  DownloadDetails,
  DownloadState,
  FailureReason,
  isActive,
  ReviewReason,
  ShareRemoval,
  TRANSFER_KEYS,
  transferFields,
} from './model';
import { sameTransfer } from './transfer';

/**
 * The decisions behind "at most one active download per infohash", as pure
 * functions: from the rows a store read to a PLAN of conditional writes, or a
 * typed refusal. The store (dynamodb-store.ts) executes a plan as ONE
 * transaction and turns a cancelled one back into a refusal here; it chooses
 * nothing itself. Nothing in this file reads, writes or knows the SDK
 * (test/unit/architecture checks it), so every branch is unit-tested on plain
 * values (test/unit/downloads/guards.test.ts).
 *
 * A plan is data: the writes in transaction order, each with the condition
 * that must hold for ALL of them to apply. The guard items' conditions ARE
 * the invariant: `absent` on a new guard, `freeOrHeldBy` to hold one's own,
 * `ownGuard` to release only one's own, `takenFrom` to move one in a merge.
 */

export type Item = Record<string, unknown>;

/** What must hold for a write; the store spells each as a DynamoDB condition. */
export type Condition =
  /** No item under this key yet (`attribute_not_exists(PK)`). */
  | { absent: true }
  /** The download is still at the revision read (the CAS). */
  | { revisionIs: number }
  /** The guard is free or already this download's (a stuck download retried). */
  | { freeOrHeldBy: string }
  /** The guard is this download's own: releasing never frees another's. */
  | { ownGuard: string }
  /** The guard is still the absorbed download's: a merge moves only what it read. */
  | { takenFrom: string };

/** `keep`: attributes the put sets only on a new item (an existing one keeps its own: a hash record's created_at). */
export type PlannedWrite =
  { put: Item; when?: Condition; keep?: readonly string[] } | { delete: Record<string, string>; when?: Condition };

export interface WritePlan {
  /** In transaction order. A CAS of the download, when there is one, is FIRST: its refusal means "moved, read again". */
  writes: PlannedWrite[];
  /** The typed refusal a failed guard condition becomes (none: the failure is rethrown as it is). */
  guardRefusal?: 'ACTIVE_EXISTS' | 'INFOHASH_TAKEN';
}

/** A decision on the rows read: write this plan (and `next` is the result), nothing to write, or a typed refusal. */
export type Decision = { write: WritePlan; next: Download } | { unchanged: Download } | { refused: Error };

/** A guard whose condition refused a write, and the download it names. */
export interface HeldGuard {
  infohash: string;
  ownerId: string;
}

// --- owner -----------------------------------------------------------------------

/**
 * The download that owns EVERY hash: `download` when the first hash's guard
 * names it, and it is active and holds them all; else undefined (no owner, or
 * the hashes are split). An active download that holds the hashes IS the
 * guards' holder: guards move in the same transaction as the state.
 */
export function ownerOfAll(
  guardHolder: string | undefined,
  download: Download | undefined,
  hashes: Infohash[],
): Download | undefined {
  if (!download || guardHolder !== download.id || !isActive(download.state)) return undefined;
  const held = new Set(download.infohashes.map((h) => h.infohash));
  return hashes.every((h) => held.has(h.infohash)) ? download : undefined;
}

/**
 * What a refused create does next, from the guards that refused it:
 * nothing explains it (`unexplained`: the failure is rethrown); one owner
 * (`dedup` onto it); several (the call's hashes are split across active
 * downloads, each ingested with one hash of this torrent: they are one
 * torrent, so `merge` into the survivor).
 */
export function afterCreateRefused(
  refused: HeldGuard[],
): { unexplained: true } | { dedupOnto: string } | { merge: { survivorId: string; absorbed: string[] } } {
  const owners = [...new Set(refused.map((g) => g.ownerId))];
  if (owners.length === 0) return { unexplained: true };
  if (owners.length === 1) return { dedupOnto: owners[0] };
  return { merge: chooseSurvivor(owners) };
}

/** The typed refusal of a failed guard condition, naming the FIRST holder (transaction = hash order). */
export function refusalOf(kind: WritePlan['guardRefusal'], refused: HeldGuard[]): Error | undefined {
  const first = refused[0];
  if (!kind || !first) return undefined;
  return kind === 'ACTIVE_EXISTS'
    ? new ActiveExistsError(first.infohash, first.ownerId)
    : new InfohashTakenError(first.infohash, first.ownerId);
}

// --- survivor, moving hashes, cap ------------------------------------------------

/**
 * The oldest survives: ULIDs sort by creation time, and two owners never
 * share an id, so the order is total and every racing caller picks the same
 * survivor. The others are absorbed in the same (ascending) order.
 */
export function chooseSurvivor(ownerIds: string[]): { survivorId: string; absorbed: string[] } {
  const [survivorId, ...absorbed] = [...new Set(ownerIds)].sort();
  return { survivorId, absorbed };
}

/** The victim's hashes the survivor does not hold yet, in the victim's order. */
export function movingHashes(survivor: Download, victim: Download): Infohash[] {
  const held = new Set(survivor.infohashes.map((h) => h.infohash));
  return victim.infohashes.filter((h) => !held.has(h.infohash));
}

/** True when `held` hashes plus `adding` stay within MAX_INFOHASHES (the boundary itself is allowed). */
export function withinCap(held: number, adding: number): boolean {
  return held + adding <= MAX_INFOHASHES;
}

// --- plans -------------------------------------------------------------------------

/** A new active download: the download, and per hash its membership and its guard, all or nothing. */
export function planCreate(download: Download): WritePlan {
  return {
    writes: [
      { put: downloadToItem(download), when: { absent: true } },
      ...download.infohashes.flatMap((h): PlannedWrite[] => [
        membershipWrite(h, download.id, download.created_at),
        {
          put: guardItem(h.infohash, download.id, download.created_at),
          when: { absent: true },
          keep: HASH_RECORD_KEPT,
        },
      ]),
    ],
  };
}

/** Into the active set: every guard of the download held (free or already its own), the review marks cleared. */
export function planActivate(current: Download, to: ActiveState, at: string): Decision {
  const {
    review_reason: _r,
    missing_since: _m,
    warning: _w,
    warned_at: _wa,
    failure_reason: _f,
    metadata_at: _ma,
    hold: _h,
    held_at: _ha,
    hold_needed_bytes: _hn,
    hold_free_bytes: _hf,
    seeding_since: _ss,
    share_met_at: _sm,
    share_removal: _sr,
    removed_at: _ra,
    removed_files: _rf,
    ...rest
  } = current;
  // An activation starts the timeout clock again (lifecycle.ts): a retried download gets its whole time.
  // Its seeding goal starts over too: it will complete again.
  const next: Download = { ...rest, state: to, updated_at: at, progress_at: at, revision: current.revision + 1 };
  const pendingRemoval = current.share_removal && !current.removed_at;
  return {
    next,
    write: {
      writes: [
        casWrite(next, current.revision),
        ...current.infohashes.map((h) => holdGuard(h.infohash, current.id, at)),
        ...(pendingRemoval ? [{ delete: shareRemovalKey(current.id) }] : []),
      ],
      guardRefusal: 'ACTIVE_EXISTS',
    },
  };
}

/**
 * Appends the hashes the download lacks (sorted), with their memberships and,
 * while it is active, their guards. `requireActive` is the dedup's: an owner
 * that left the active set meanwhile is `notActive` (the caller creates again).
 */
export function planAppend(
  current: Download,
  hashes: Infohash[],
  at: string,
  requireActive: boolean,
): Decision | { notActive: true } {
  if (requireActive && !isActive(current.state)) return { notActive: true };
  const held = new Set(current.infohashes.map((h) => h.infohash));
  const missing = sortHashes(hashes).filter((h) => !held.has(h.infohash));
  if (missing.length === 0) return { unchanged: current };
  if (!withinCap(held.size, missing.length)) return { refused: new TooManyInfohashesError(current.id, MAX_INFOHASHES) };

  const next: Download = {
    ...current,
    infohashes: sortHashes([...current.infohashes, ...missing]),
    updated_at: at,
    revision: current.revision + 1,
  };
  const active = isActive(current.state);
  return {
    next,
    write: {
      writes: [
        casWrite(next, current.revision),
        ...missing.flatMap((h): PlannedWrite[] => [
          membershipWrite(h, current.id, at),
          ...(active ? [holdGuard(h.infohash, current.id, at)] : []),
        ]),
      ],
      guardRefusal: 'INFOHASH_TAKEN',
    },
  };
}

/** Refused before any read: a finished download becomes active again only through retry (activate). */
export function refuseReactivation(id: string, from: DownloadState, to: DownloadState): Error | undefined {
  return !isActive(from) && isActive(to)
    ? new InvalidTransitionError(id, from, to, 'a finished download becomes active again only through retry')
    : undefined;
}

/** CAS from `from` to `to`; leaving the active set releases exactly the download's own guards. */
export function planSetState(
  current: Download,
  from: DownloadState,
  to: DownloadState,
  review: ReviewReason | undefined,
  at: string,
): Decision {
  if (current.state !== from)
    return {
      refused: new InvalidTransitionError(
        current.id,
        current.state,
        to,
        `the download is ${current.state}, not ${from}`,
      ),
    };
  if (from === to) return { unchanged: current };
  if (!isActive(from))
    return { refused: new InvalidTransitionError(current.id, from, to, 'a finished download stays finished') };

  const next: Download = {
    ...current,
    state: to,
    updated_at: at,
    revision: current.revision + 1,
    ...(to === 'cancelled' ? { cancelled_at: at } : {}),
    ...(review && !isActive(to) ? { review_reason: review } : {}),
  };
  return {
    next,
    write: {
      writes: [
        casWrite(next, current.revision),
        ...(isActive(to)
          ? []
          : current.infohashes.map((h): PlannedWrite => ({
              delete: guardKey(h.infohash),
              when: { ownGuard: current.id },
            }))),
      ],
    },
  };
}

/** Progress and missing_since only (null clears): never the state, never a guard. */
export function planDetails(current: Download, details: DownloadDetails, at: string): Decision {
  const next: Download = { ...current };
  if (details.progress !== undefined) next.progress = details.progress;
  if (details.missing_since === null) delete next.missing_since;
  else if (details.missing_since !== undefined) next.missing_since = details.missing_since;
  if (details.progress_at !== undefined) next.progress_at = details.progress_at;
  if (details.metadata_at === null) delete next.metadata_at;
  else if (details.metadata_at !== undefined) next.metadata_at = details.metadata_at;
  if (details.warning === null) {
    delete next.warning;
    delete next.warned_at;
  }
  if (details.hold === null) {
    delete next.hold;
    delete next.held_at;
    delete next.hold_needed_bytes;
    delete next.hold_free_bytes;
  } else if (details.hold) {
    next.hold = details.hold.reason;
    next.held_at = details.hold.since;
    next.hold_needed_bytes = details.hold.needed_bytes;
    next.hold_free_bytes = details.hold.free_bytes;
  }
  // Replaced whole: a figure the client stopped sending is not kept from an older answer.
  const transferChanged =
    details.transfer !== undefined && !sameTransfer(transferFields(current), details.transfer.figures);
  if (details.transfer && transferChanged) {
    for (const k of TRANSFER_KEYS) delete next[k];
    Object.assign(next, transferFields(details.transfer.figures), { transfer_at: details.transfer.at });
  }
  if (
    !transferChanged &&
    next.progress === current.progress &&
    next.missing_since === current.missing_since &&
    next.progress_at === current.progress_at &&
    next.metadata_at === current.metadata_at &&
    next.warning === current.warning &&
    next.hold === current.hold &&
    next.held_at === current.held_at
  )
    return { unchanged: current };
  next.updated_at = at;
  next.revision = current.revision + 1;
  return { next, write: { writes: [casWrite(next, current.revision)] } };
}

/**
 * One absorbed download into the survivor: the victim turns `cancelled` with
 * `merged_into`, and its hashes the survivor lacks (memberships and guards)
 * move to the survivor. Both rows are CAS on their revision, each moved guard
 * on its old holder. `stale` when either row is gone or no longer active
 * (changed under us: the caller goes round and reads again).
 */
export function planMerge(
  survivorId: string,
  survivor: Download | undefined,
  victim: Download | undefined,
  at: string,
): WritePlan | { stale: true } | { refused: Error } {
  if (!survivor || !victim || !isActive(survivor.state) || !isActive(victim.state)) return { stale: true };
  const moving = movingHashes(survivor, victim);
  if (!withinCap(survivor.infohashes.length, moving.length))
    return { refused: new TooManyInfohashesError(survivorId, MAX_INFOHASHES) };
  return {
    writes: [
      casWrite(
        {
          ...survivor,
          infohashes: sortHashes([...survivor.infohashes, ...moving]),
          updated_at: at,
          revision: survivor.revision + 1,
        },
        survivor.revision,
      ),
      casWrite(
        { ...victim, state: 'cancelled', merged_into: survivorId, updated_at: at, revision: victim.revision + 1 },
        victim.revision,
      ),
      ...moving.flatMap((h): PlannedWrite[] => [
        membershipWrite(h, survivorId, at),
        { put: guardItem(h.infohash, survivorId, at), when: { takenFrom: victim.id }, keep: HASH_RECORD_KEPT },
      ]),
    ],
  };
}

// --- the legacy import -----------------------------------------------------------

/** A legacy row as written: hashes sorted, 1..MAX_INFOHASHES of them, revision 1. */
export function importable(download: Download): Download {
  const hashes = sortHashes(download.infohashes);
  if (hashes.length === 0 || hashes.length > MAX_INFOHASHES)
    throw new RangeError(`1..${MAX_INFOHASHES} infohashes required`);
  return { ...download, infohashes: hashes, revision: 1 };
}

/**
 * An imported row in ONE transaction: its legacy-id item FIRST (a cancelled
 * import names the item that refused it, and this one means "done before"),
 * the download, its memberships and, when active, its guards.
 */
export function planImport(d: Download, legacyId: string): WritePlan {
  return {
    writes: [
      { put: legacyIdItem(legacyId, d.id), when: { absent: true } },
      { put: downloadToItem(d), when: { absent: true } },
      ...d.infohashes.flatMap((h): PlannedWrite[] => [
        membershipWrite(h, d.id, d.updated_at),
        ...(isActive(d.state)
          ? [
              {
                put: guardItem(h.infohash, d.id, d.updated_at),
                when: { absent: true },
                keep: HASH_RECORD_KEPT,
              } as PlannedWrite,
            ]
          : []),
      ]),
    ],
  };
}

/** An active legacy row whose hash another active download owns: the owner keeps it, the row arrives `failed`. */
export function importedAsFailed(d: Download): Download {
  return { ...d, state: 'failed' };
}

/** The rows of one import batch must not share a hash (each row's guards would refuse another's). */
export function refuseSharedHashes(rows: Array<{ download: Download }>): Error | undefined {
  const hashes = rows.flatMap((r) => r.download.infohashes.map((h) => h.infohash));
  return new Set(hashes).size !== hashes.length
    ? new RangeError('the rows of one import batch must not share an infohash')
    : undefined;
}

// --- the two writes every plan is made of ------------------------------------------

/** Rewrites the download if nobody else wrote it since `revision` was read. */
// --- timeouts (lifecycle.ts decides when; these decide on the row as read) -------------

/**
 * The warning of a timeout, only on an active download with none yet whose clock is still `basis` (the
 * progress_at the poll counted from): a progress or a "keep waiting" written meanwhile wins, nothing is written.
 */
export function planWarn(current: Download, reason: FailureReason, basis: string, at: string): Decision {
  if (
    !isActive(current.state) ||
    current.warning !== undefined ||
    (current.progress_at ?? current.created_at) !== basis
  )
    return { unchanged: current };
  const next: Download = { ...current, warning: reason, warned_at: at, updated_at: at, revision: current.revision + 1 };
  return { next, write: { writes: [casWrite(next, current.revision)] } };
}

/** "Keep waiting": the warning cleared and the clock restarted, once. No warning (a second press): nothing written. */
export function planKeepWaiting(current: Download, at: string): Decision {
  if (!isActive(current.state))
    return {
      refused: new InvalidTransitionError(current.id, current.state, current.state, 'use retry on a finished download'),
    };
  if (current.warning === undefined) return { unchanged: current };
  const { warning: _w, warned_at: _wa, ...rest } = current;
  const next: Download = { ...rest, progress_at: at, updated_at: at, revision: current.revision + 1 };
  return { next, write: { writes: [casWrite(next, current.revision)] } };
}

/**
 * The end of a timed-out download: `failed` with its reason, through the same terminal transition as every
 * other (planSetState: the guards released in the same transaction), only while the warning read stands.
 */
export function planFailTimedOut(current: Download, reason: FailureReason, warnedAt: string, at: string): Decision {
  if (current.warning !== reason || current.warned_at !== warnedAt)
    return {
      refused: new InvalidTransitionError(current.id, current.state, 'failed', 'the warning was answered meanwhile'),
    };
  const decision = planSetState(current, current.state, 'failed', undefined, at);
  if (!('write' in decision)) return decision;
  const { warning: _w, warned_at: _wa, ...rest } = decision.next;
  const next: Download = { ...rest, failure_reason: reason };
  return {
    next,
    write: { ...decision.write, writes: [casWrite(next, current.revision), ...decision.write.writes.slice(1)] },
  };
}

// --- seeding goals (share-goals.ts decides when; this decides on the row as read) -----------

/**
 * A step of a completed download's seeding goal: its clock started; the goal met, with the removal intended
 * (and its marker, so a crash before the removal is recorded is finished by a later poll); the removal done.
 */
export type ShareStep = { seeding: true } | { met: true; removal?: ShareRemoval } | { removed: true; files: boolean };

/**
 * `met` is refused when another writer met it first: of two polls at once, only the one whose write
 * landed goes on to remove the torrent. `seeding` and `removed` are idempotent (a second one writes nothing).
 */
export function planShare(current: Download, step: ShareStep, at: string): Decision {
  const refuse = (why: string): Decision => ({
    refused: new InvalidTransitionError(current.id, current.state, current.state, why),
  });
  if (current.state !== 'completed') return refuse('only a completed download seeds');
  let next: Download;
  const writes: PlannedWrite[] = [];
  if ('seeding' in step) {
    if (current.seeding_since || current.share_met_at) return { unchanged: current };
    next = { ...current, seeding_since: at };
  } else if ('met' in step) {
    if (current.share_met_at) return refuse('the seeding goal was met already');
    next = {
      ...current,
      seeding_since: current.seeding_since ?? at,
      share_met_at: at,
      ...(step.removal ? { share_removal: step.removal } : {}),
    };
    if (step.removal) writes.push({ put: shareRemovalItem(current.id, at) });
  } else {
    if (current.removed_at) return { unchanged: current };
    if (!current.share_removal) return refuse('no removal was intended');
    next = { ...current, removed_at: at, removed_files: step.files };
    writes.push({ delete: shareRemovalKey(current.id) });
  }
  next = { ...next, updated_at: at, revision: current.revision + 1 };
  return { next, write: { writes: [casWrite(next, current.revision), ...writes] } };
}

function casWrite(next: Download, revision: number): PlannedWrite {
  return { put: downloadToItem(next), when: { revisionIs: revision } };
}

/** The guard of `infohash` for `id`: passes when free or already `id`'s. */
function holdGuard(infohash: string, id: string, at: string): PlannedWrite {
  return { put: guardItem(infohash, id, at), when: { freeOrHeldBy: id }, keep: HASH_RECORD_KEPT };
}

/** A hash's membership of a download: history, so a later write of it keeps when it was first written. */
function membershipWrite(h: Infohash, id: string, at: string): PlannedWrite {
  return { put: membershipItem(h, id, at), keep: HASH_RECORD_KEPT };
}

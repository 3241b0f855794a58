import { parseIsoTime } from '../clock';
import { Env, EnvReader } from '../config/env';
import { Download, SHARE_ACTIONS, ShareAction } from './model';

export { SHARE_ACTIONS, type ShareAction } from './model';

/**
 * Seeding goals (decisions 420-424), as pure functions of the download, the client's figures and an injected
 * `now` (epoch ms): a ratio and/or a seeding time, and what happens when the goal is met (or, with no goal, when
 * the download completes): `keep` the torrent, `remove` it keeping its files, or `remove_files`. The poll
 * (reconcile.ts) carries the verdict out with the store's guarded writes; nothing here reads or writes.
 *
 * The goals are handed to the client on add (qBittorrent's `ratioLimit`, `seedingTimeLimit` in minutes), so
 * it stops uploading at the goal by itself; the poll decides "met" on its own figures too: the ratio from the
 * client's `ratio`, the time from the larger of the client's `seeding_time` (bounded by the torrent's age:
 * a hostile figure never removes a young torrent) and its own durable clock `seeding_since` (written when it
 * first saw the download completed: qBittorrent 4.5's idle seed freezes its `seeding_time`).
 */

export interface ShareSettings {
  /** The ratio goal (uploaded / downloaded); null: none. */
  ratio: number | null;
  /** The seeding-time goal in seconds; 0: none. */
  timeS: number;
  action: ShareAction;
}

/** Decision 420: no goal, keep: the product does what it did before. */
export const DEFAULT_SHARE: ShareSettings = { ratio: null, timeS: 0, action: 'keep' };
/** A ratio beyond this is no goal anyone means (qBittorrent's own maximum is 9998). */
export const MAX_SHARE_RATIO = 1000;
/** At most a year of seeding. */
export const MAX_SHARE_TIME_S = 365 * 24 * 3600;

/**
 * How long the poll that met a goal has to carry out its removal before another poll takes it as crashed and
 * finishes it: of two polls at once, only the one whose `met` write landed removes the torrent.
 */
export const REMOVAL_LEASE_MS = 2 * 60_000;

export function isShareAction(v: unknown): v is ShareAction {
  return typeof v === 'string' && (SHARE_ACTIONS as readonly string[]).includes(v);
}

/** DOWNLOAD_SHARE_RATIO (decimal or `off`), DOWNLOAD_SHARE_TIME_S, DOWNLOAD_SHARE_ACTION (docs/downloads.md#settings). */
export function loadShareSettings(env: Env = process.env): ShareSettings {
  const r = new EnvReader(env);
  const ratioText = r.string('DOWNLOAD_SHARE_RATIO', {
    default: 'off',
    pattern: /^(off|\d{1,4}(\.\d{1,2})?)$/,
    hint: `a ratio of 0..${MAX_SHARE_RATIO} (up to 2 decimals, e.g. 2 or 1.5), or off`,
  });
  const timeS = r.int('DOWNLOAD_SHARE_TIME_S', { default: DEFAULT_SHARE.timeS, min: 0, max: MAX_SHARE_TIME_S });
  const action = r.string('DOWNLOAD_SHARE_ACTION', {
    default: DEFAULT_SHARE.action,
    pattern: /^(keep|remove|remove_files)$/,
    hint: 'keep, remove or remove_files',
  });
  const ratio = ratioText === 'off' || ratioText === '' ? null : Number(ratioText);
  if (ratio !== null && ratio > MAX_SHARE_RATIO)
    r.refuse('DOWNLOAD_SHARE_RATIO', `must be at most ${MAX_SHARE_RATIO}, got ${ratio}`);
  r.done();
  return { ratio, timeS, action: action as ShareAction };
}

/** A stored or sent ratio goal: a finite number of 0..MAX_SHARE_RATIO, else not one. */
export function validRatio(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_SHARE_RATIO;
}

export function validTimeS(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_SHARE_TIME_S;
}

/** The goal of one download: its own values (as stored at creation), else the settings. */
export function goalOf(
  d: Pick<Download, 'share_ratio' | 'share_time_s' | 'share_action'>,
  settings: ShareSettings,
): ShareSettings {
  return {
    ratio: validRatio(d.share_ratio) ? d.share_ratio : settings.ratio,
    timeS: validTimeS(d.share_time_s) ? d.share_time_s : settings.timeS,
    action: isShareAction(d.share_action) ? d.share_action : settings.action,
  };
}

export function hasGoal(goal: ShareSettings): boolean {
  return goal.ratio !== null || goal.timeS > 0;
}

/** What the client is told on add: qBittorrent's `ratioLimit` and `seedingTimeLimit` (whole MINUTES, rounded up). */
export function clientLimits(goal: ShareSettings): { ratioLimit?: number; seedingTimeLimit?: number } {
  return {
    ...(goal.ratio !== null ? { ratioLimit: goal.ratio } : {}),
    ...(goal.timeS > 0 ? { seedingTimeLimit: Math.ceil(goal.timeS / 60) } : {}),
  };
}

/** The client's figures of a completed torrent, as read (any may be absent or hostile). */
export interface SeedFigures {
  ratio?: number;
  /** Seconds it has seeded, by the client's count. */
  seeding_time?: number;
  /** Unix seconds. */
  added_on?: number;
}

export type ShareVerdict =
  | { action: 'none' }
  /** First sighting completed with a goal to follow: write `seeding_since`. */
  | { action: 'start' }
  /** The goal is met (or there is none and the action removes): record it, with the removal intended. */
  | { action: 'met'; removal: ShareAction }
  /** The removal was intended (by this poll or one that crashed after it): carry it out, then record it. */
  | { action: 'remove'; deleteFiles: boolean };

/**
 * The verdict on one COMPLETED download whose torrent the client still holds. Boundaries are inclusive
 * (a ratio of exactly 2.0 meets a goal of 2.0). A removal once intended is only ever finished, never judged again.
 */
export function judgeShare(
  d: Pick<
    Download,
    | 'state'
    | 'share_ratio'
    | 'share_time_s'
    | 'share_action'
    | 'seeding_since'
    | 'share_met_at'
    | 'share_removal'
    | 'removed_at'
  >,
  figures: SeedFigures,
  settings: ShareSettings,
  now: number,
): ShareVerdict {
  if (d.state !== 'completed' || d.removed_at) return { action: 'none' };
  if (d.share_removal)
    return removalDue(d, now)
      ? { action: 'remove', deleteFiles: d.share_removal === 'remove_files' }
      : { action: 'none' };
  if (d.share_met_at) return { action: 'none' };
  const goal = goalOf(d, settings);
  if (!hasGoal(goal)) return goal.action === 'keep' ? { action: 'none' } : { action: 'met', removal: goal.action };
  if (goalMet(goal, d.seeding_since, figures, now)) return { action: 'met', removal: goal.action };
  return d.seeding_since ? { action: 'none' } : { action: 'start' };
}

/** An intended removal not recorded done within the lease: its poll crashed (an unreadable time: due). */
export function removalDue(d: Pick<Download, 'share_met_at'>, now: number): boolean {
  const at = parseIsoTime(d.share_met_at);
  return at === undefined || now - at >= REMOVAL_LEASE_MS;
}

function goalMet(goal: ShareSettings, seedingSince: string | undefined, f: SeedFigures, now: number): boolean {
  // NaN, negative or infinite: not a ratio (readTorrent drops most; a stored or emulated figure may still be one).
  if (goal.ratio !== null && typeof f.ratio === 'number' && Number.isFinite(f.ratio) && f.ratio >= goal.ratio)
    return true;
  if (goal.timeS === 0) return false;
  return seededS(seedingSince, f, now) >= goal.timeS;
}

/** Seconds seeded: our own clock, or the client's figure bounded by the torrent's age in the client. */
export function seededS(seedingSince: string | undefined, f: SeedFigures, now: number): number {
  const since = parseIsoTime(seedingSince);
  const ours = since === undefined ? 0 : Math.max(0, (now - since) / 1000);
  const age =
    typeof f.added_on === 'number' && Number.isFinite(f.added_on) && f.added_on > 0 ? now / 1000 - f.added_on : 0;
  const theirs =
    typeof f.seeding_time === 'number' && Number.isFinite(f.seeding_time) && f.seeding_time >= 0
      ? Math.min(f.seeding_time, Math.max(0, age))
      : 0;
  return Math.max(ours, theirs);
}

/**
 * Pacing schedules (GCRA, the generic cell rate algorithm): one durable
 * "theoretical arrival time" (`tat`) per schedule, advanced by ONE atomic
 * write per call, so every container and invocation shares it. A call is sent
 * at max(now, tat − burst) and moves `tat` to max(tat, now) + interval. Then
 * any window of length W holds at most floor((W + burst) / interval) + 1 sends
 * (sliding: wherever the window starts), which `paceFor` turns around: the
 * interval and burst that keep a limit per window.
 */

export interface Pace {
  /** The spacing of sends, ms. */
  intervalMs: number;
  /** How far ahead of the spacing a quiet schedule may send at once (0: none). */
  burstMs: number;
}

/**
 * The pace that keeps every sliding window of `windowMs` at or under `limit` sends, spending
 * `burstShare` of the window as a burst a quiet schedule may send at once.
 */
export function paceFor(limit: number, windowMs: number, burstShare = 0): Pace {
  if (!(limit >= 2)) return { intervalMs: windowMs + 1, burstMs: 0 };
  const burstMs = windowMs * burstShare;
  // floor((W + burst) / interval) + 1 <= limit.
  return { intervalMs: (windowMs + burstMs) / (limit - 1), burstMs };
}

/** The stricter of two paces for one schedule (e.g. a per-second and a per-minute limit, no burst). */
export const stricter = (a: Pace, b: Pace): Pace => (a.intervalMs >= b.intervalMs ? a : b);

/** The most sends any sliding window of `windowMs` can see under `pace` (the bound the tests check). */
export const sendsPerWindow = (pace: Pace, windowMs: number): number =>
  Math.floor((windowMs + pace.burstMs) / pace.intervalMs) + 1;

/** The outcome of one GCRA step from the schedule's `tat` (absent: never used). */
export function gcra(tat: number | undefined, now: number, pace: Pace): { at: number; tat: number } {
  const from = Math.max(tat ?? 0, now);
  return { at: Math.max(now, (tat ?? 0) - pace.burstMs), tat: from + pace.intervalMs };
}

/** A send instant taken, or the schedule's earliest one when it is past the caller's `latest`. */
export type Taken = { at: number } | { busyUntil: number };

/** The durable schedules (dynamodb-pace.ts; memory in tests and benches). */
export interface PaceStore {
  /**
   * Takes the next send instant of schedule `key` (ONE conditional write); a send instant later
   * than `latest` is not taken: the answer says when the schedule frees up.
   */
  takePace(key: string, now: number, pace: Pace, latest: number, expiresAt: number): Promise<Taken>;
  /** No send of `key` before `until`: pushes its schedule there and records the pause (a 429's reset). */
  pausePace(key: string, until: number, pace: Pace, expiresAt: number): Promise<void>;
  /** The end of the schedule's current pause (0: none): a send instant taken before the pause is re-taken. */
  pacePausedUntil(key: string): Promise<number>;
  /** How far past `now` the schedule's send instants are already taken (ms; 0: idle): its queue. */
  paceQueuedMs(key: string, now: number): Promise<number>;
}

/** The schedule of the egress addresses' calls (ours, never a user id: those are ULIDs). */
export const EGRESS_PACE = 'EGRESS';
/** The schedule of one token's calls to one T-Bank service. */
export const tokenPace = (user: string, service: string) => `TOKEN#${user}#${service}`;

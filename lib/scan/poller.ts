import type { Logger } from '../log';
import type { WakeMode } from './change-signal';
import { GatewayDeps, pollRun } from './gateway';

/**
 * The poller's lease: at most one poller runs, one is started by the request
 * that finds none, and a poller that still has work when its invocation is
 * about to end hands over to a successor. The minute schedule stays as the
 * safety net (it polls only when no lease is held or the holder is gone).
 *
 * One item holds `lease` ({holder, expires_at}) and `demand_at` (the last
 * request's time). The holder's lease ends at its invocation's hard end (a
 * poller cut short by a crash or a timeout is replaced once it is over); a
 * poller that was invoked but has not started yet holds it for
 * POLLER_START_GRACE_MS. A poller releases only if no request wrote
 * `demand_at` since shortly before its last pass began, so a request that
 * found the lease held is always seen by some pass: either that holder's
 * (the release fails and it polls on) or the poller it starts itself (the
 * release succeeded, so the request's write finds no lease).
 *
 * The holder also records there what wakes it (`wake`: the hot folder's change
 * reports or only its poll), whenever that changes: the health check reads it,
 * since only a running poller watches the folder.
 */

export interface Lease {
  /** A ULID per poller invocation. */
  holder: string;
  /** Until then nobody else may poll (epoch ms). */
  expires_at: number;
}

/** What woke the poller that last held the lease, as it recorded it (epoch ms). */
export interface WakeRecord {
  mode: WakeMode;
  at: number;
}

export interface PollerLeaseStore {
  /**
   * The request's one write: records `demand_at = now` and takes the lease for
   * `candidate` when none is held. Answers the lease as it stands after the write.
   */
  demand(candidate: Lease, now: number): Promise<Lease>;
  /** Takes the lease for `candidate` when none is held or the held one has expired. */
  acquire(candidate: Lease, now: number): Promise<boolean>;
  /** A started poller confirms the lease handed to it, holding it until its hard end. */
  confirm(holder: string, expiresAt: number): Promise<boolean>;
  /** The holder gives the lease to a successor it is about to invoke. */
  handOver(from: string, to: Lease): Promise<boolean>;
  /** The holder drops the lease, only if no request came in since `quietSince`. */
  release(holder: string, quietSince: number): Promise<boolean>;
  /** The holder records its wake mode; refused (false) to a poller that no longer holds the lease. */
  recordWake(holder: string, wake: WakeRecord): Promise<boolean>;
  read(): Promise<{ lease?: Lease; demand_at?: number; wake?: WakeRecord }>;
}

export interface PollerDeps {
  lease: PollerLeaseStore;
  /** Starts a poller invocation that will confirm `holder` (async: it does not wait for the poller). */
  start: (holder: string) => Promise<void>;
  newId: () => string;
}

/** An invoked poller not started after this long is presumed lost; its lease may be taken. */
export const POLLER_START_GRACE_MS = 10_000;
/**
 * A request whose demand is this close to a pass's start may not have been seen by it (the state index is
 * eventually consistent; clocks of two containers differ by a few ms): the poller does not release on it.
 */
export const DEMAND_MARGIN_MS = 1000;
/** The poller hands over (or ends) this long before its invocation's hard end. */
export const HANDOVER_MARGIN_MS = 5000;

export type EnsureOutcome = 'started' | 'running' | 'failed';

/**
 * The request path, after its job is stored: one write; when no poller holds the lease, this request's candidate
 * took it and a poller is invoked for it. Never throws: a request never fails for this (the schedule still polls).
 */
export async function ensurePoller(poller: PollerDeps, now: number, log: Logger): Promise<EnsureOutcome> {
  const candidate: Lease = { holder: poller.newId(), expires_at: now + POLLER_START_GRACE_MS };
  try {
    const lease = await poller.lease.demand(candidate, now);
    let mine = lease.holder === candidate.holder;
    // The holder is gone (a crashed or lost invocation): take over with a conditional write.
    if (!mine && lease.expires_at < now) mine = await poller.lease.acquire(candidate, now);
    if (!mine) return 'running';
  } catch (err) {
    log.error('scan_poller_lease_failed', { err });
    return 'failed';
  }
  try {
    await poller.start(candidate.holder);
    log.info('scan_poller_started', { holder: candidate.holder, by: 'request' });
    return 'started';
  } catch (err) {
    // Give the lease back so the next request (or the schedule) can start one.
    log.error('scan_poller_start_failed', { holder: candidate.holder, err });
    await poller.lease.release(candidate.holder, Number.MAX_SAFE_INTEGER).catch(() => undefined);
    return 'failed';
  }
}

export interface PollerRun {
  outcome: 'lease-held' | 'released' | 'handed-over' | 'ended';
  holder: string;
  passes: number;
  finished: number;
}

/**
 * One poller invocation. `holder`: the lease handed to it (by a request or a predecessor); without it (the
 * schedule) it takes the lease only when none is held. It polls until idle — then releases when no request
 * came in meanwhile, else polls on — or until HANDOVER_MARGIN_MS before `hardEndAt`, when it hands over to a
 * successor if work remains.
 */
export async function runPoller(
  gateway: GatewayDeps,
  poller: PollerDeps,
  options: { holder?: string; hardEndAt: number },
): Promise<PollerRun> {
  const { log } = gateway;
  const me = options.holder ?? poller.newId();
  const owned = options.holder
    ? await poller.lease.confirm(me, options.hardEndAt)
    : await poller.lease.acquire({ holder: me, expires_at: options.hardEndAt }, gateway.now());
  const run: PollerRun = { outcome: 'lease-held', holder: me, passes: 0, finished: 0 };
  if (!owned) {
    log.info('scan_poller_skipped', { holder: me, reason: 'another poller holds the lease' });
    return run;
  }
  const budgetEndsAt = options.hardEndAt - HANDOVER_MARGIN_MS;
  let recorded: WakeMode | undefined;
  const recordWake = async () => {
    const mode = gateway.hotFolder.wakeMode?.();
    if (!mode || mode === recorded) return;
    // A lost write is tried again after the next pass; it never stops the poll.
    const written = await poller.lease.recordWake(me, { mode, at: gateway.now() }).catch((err: unknown) => {
      log.warn('scan_poller_wake_unrecorded', { holder: me, mode, err });
      return false;
    });
    if (written) recorded = mode;
  };
  for (;;) {
    const polled = await pollRun(gateway, budgetEndsAt, recordWake);
    run.passes += polled.passes.length;
    run.finished += polled.passes.reduce((n, p) => n + p.finished, 0);
    if (polled.idle && (await poller.lease.release(me, polled.lastPassAt - DEMAND_MARGIN_MS))) {
      run.outcome = 'released';
      return run;
    }
    if (gateway.now() + gateway.config.pollEveryMs >= budgetEndsAt) break;
    if (polled.idle) {
      // A request came in around the last pass: look again shortly (its job may not be in the index yet).
      const pause = Math.min(gateway.config.pollEveryMs, DEMAND_MARGIN_MS);
      await (gateway.hotFolder.changed?.(pause) ?? new Promise((r) => setTimeout(r, pause)));
    }
  }
  // Work remains (or a request just came in) and this invocation is about to end: a successor takes over.
  const successor = poller.newId();
  const handed = await poller.lease.handOver(me, {
    holder: successor,
    expires_at: gateway.now() + POLLER_START_GRACE_MS,
  });
  if (!handed) {
    log.warn('scan_poller_lease_lost', { holder: me });
    run.outcome = 'ended';
    return run;
  }
  try {
    await poller.start(successor);
    log.info('scan_poller_started', { holder: successor, by: me });
    run.outcome = 'handed-over';
  } catch (err) {
    // The schedule (or the next request) takes over once the successor's start grace has passed.
    log.error('scan_poller_start_failed', { holder: successor, err });
    await poller.lease.release(successor, Number.MAX_SAFE_INTEGER).catch(() => undefined);
    run.outcome = 'ended';
  }
  return run;
}

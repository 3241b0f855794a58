import { asyncHandler } from '../../lib/lambda/async-handler';
import type { Context } from 'aws-lambda';
import { isId } from '../../lib/ident';
import type { GatewayDeps } from '../../lib/scan/gateway';
import { PollerDeps, PollerRun, runPoller } from '../../lib/scan/poller';
import { log, pollerDeps, scanDeps } from './deps';

/**
 * The poller (lib/scan/poller.ts). Invoked by the minute schedule (takes the
 * lease only when no poller holds it: the safety net), or asynchronously with
 * `{lease_holder}` by a request that found no poller or by a predecessor
 * handing over. Polls until idle or until 5 s before this invocation's
 * timeout. A failure (the store is down) is logged and ends this invocation
 * quietly: the lease runs out at the hard end and the next tick tries again.
 */
export async function pollCore(
  deps: () => GatewayDeps,
  poller: () => PollerDeps,
  event: unknown,
  remainingMs: number,
): Promise<Pick<PollerRun, 'passes' | 'finished'> & { outcome?: PollerRun['outcome']; failed?: true }> {
  const handed = (event as { lease_holder?: unknown } | null)?.lease_holder;
  // Anything but a ULID is not a lease we handed out: poll as the schedule would.
  const holder = isId(handed) ? handed.toLowerCase() : undefined;
  try {
    const run = await runPoller(deps(), poller(), { holder, hardEndAt: Date.now() + remainingMs });
    return { outcome: run.outcome, passes: run.passes, finished: run.finished };
  } catch (err) {
    log.error('scan_poll_invocation_failed', { err });
    return { passes: 0, finished: 0, failed: true };
  }
}

export const handler = asyncHandler(log, (event: unknown, context: Context) =>
  pollCore(scanDeps, pollerDeps, event, context.getRemainingTimeInMillis()),
);

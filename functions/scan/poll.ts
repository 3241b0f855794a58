import { asyncHandler } from '../../lib/lambda/async-handler';
import type { Context } from 'aws-lambda';
import { GatewayDeps, pollUntil } from '../../lib/scan/gateway';
import { log, scanDeps } from './deps';

/**
 * Schedule: poll passes until 5 s before this invocation's timeout, or until
 * nothing is in flight. A pass that fails (the store is down) is logged and
 * ends this invocation quietly: the next tick tries again.
 */
export async function pollCore(
  deps: () => GatewayDeps,
  remainingMs: number,
): Promise<{ passes: number; finished: number; failed?: true }> {
  try {
    const passes = await pollUntil(deps(), Date.now() + remainingMs - 5000);
    return { passes: passes.length, finished: passes.reduce((n, p) => n + p.finished, 0) };
  } catch (err) {
    log.error('scan_poll_invocation_failed', { err });
    return { passes: 0, finished: 0, failed: true };
  }
}

export const handler = asyncHandler(log, (_event: unknown, context: Context) =>
  pollCore(scanDeps, context.getRemainingTimeInMillis()),
);

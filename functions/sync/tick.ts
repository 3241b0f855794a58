import { systemClock } from '../../lib/clock';
import { asyncHandler } from '../../lib/lambda/async-handler';
import type { Context } from 'aws-lambda';
import { isDueShard, tick, tickShard } from '../../lib/sync/tick';
import { log, syncDeps } from './deps';

/** The run of this invocation: its hard end is its own timeout. */
const runOf = (context: Context) => ({
  run_id: context.awsRequestId,
  run_deadline: Date.now() + context.getRemainingTimeInMillis(),
});

/** Schedule (every minute): the due index, visited inline or fanned out to `syncTickShard`. */
export const handler = asyncHandler(log, async (_event: unknown, context: Context) => {
  const { hourly, connections, dispatch, fanOut, admit, queuedMs } = syncDeps();
  return tick({ hourly, connections, dispatch, fanOut, admit, queuedMs, now: systemClock, log, run: runOf(context) });
});

const isQuota = (q: unknown): q is number | undefined =>
  q === undefined || (typeof q === 'number' && Number.isSafeInteger(q) && q >= 0);

/**
 * Async invocation by the tick: one due shard `{shard, quota?, first_quota?}` (the T-Bank calls its
 * attempts may spend, and first syncs of them), with its own run deadline.
 */
export const shardHandler = asyncHandler(log, async (event: unknown, context: Context) => {
  const { shard, quota, first_quota } = (event ?? {}) as { shard?: unknown; quota?: unknown; first_quota?: unknown };
  if (!isDueShard(shard) || !isQuota(quota) || !isQuota(first_quota)) {
    log.error('sync_tick_shard_bad_input', { event: JSON.stringify(event).slice(0, 500) });
    return 'rejected';
  }
  const { hourly, connections, dispatch, admit } = syncDeps();
  return tickShard(
    { hourly, connections, dispatch, admit, now: systemClock, log, run: runOf(context) },
    shard,
    quota,
    first_quota,
  );
});

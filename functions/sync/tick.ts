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

/** Async invocation by the tick: one due shard `{shard, quota?}` (quota: the T-Bank calls it may start), with its own run deadline. */
export const shardHandler = asyncHandler(log, async (event: unknown, context: Context) => {
  const { shard, quota } = (event ?? {}) as { shard?: unknown; quota?: unknown };
  const validQuota = quota === undefined || (typeof quota === 'number' && Number.isSafeInteger(quota) && quota >= 0);
  if (!isDueShard(shard) || !validQuota) {
    log.error('sync_tick_shard_bad_input', { event: JSON.stringify(event).slice(0, 500) });
    return 'rejected';
  }
  const { hourly, connections, dispatch, admit } = syncDeps();
  return tickShard(
    { hourly, connections, dispatch, admit, now: systemClock, log, run: runOf(context) },
    shard,
    quota as number | undefined,
  );
});

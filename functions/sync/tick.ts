import { asyncHandler } from '../../lib/lambda/async-handler';
import type { Context } from 'aws-lambda';
import { tick } from '../../lib/sync/tick';
import { log, syncDeps } from './deps';

/** Schedule (every minute). The run's hard end is this invocation's own timeout. */
export const handler = asyncHandler(log, async (_event: unknown, context: Context) => {
  const { store, dispatch } = syncDeps();
  const run = { run_id: context.awsRequestId, run_deadline: Date.now() + context.getRemainingTimeInMillis() };
  return tick({ store, dispatch, now: Date.now, log, run });
});

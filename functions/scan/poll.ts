import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { pollUntil } from '../../lib/scan/gateway';
import { scanDeps } from './deps';

/** Schedule: poll passes until 5 s before this invocation's timeout, or until nothing is in flight. */
export const handler = middy().handler(async (_event: unknown, context: Context) => {
  const passes = await pollUntil(scanDeps(), Date.now() + context.getRemainingTimeInMillis() - 5000);
  return { passes: passes.length, finished: passes.reduce((n, p) => n + p.finished, 0) };
});

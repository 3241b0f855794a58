import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { invocationScope, type Logger } from '../log';
import { emitMetric } from '../metrics';
import { secretsBeforeInvocation } from './secrets';

/**
 * The one way an asynchronously invoked handler is built (schedules, `Event`
 * invokes, the NATS bridge, streams): middy over a plain async function, run
 * in its own log scope (request id, function, cold start, trace id on every
 * line: lib/log/context.ts), whose failure is always logged
 * (`async_handler_failed`, with the stack and cause chain) and counted
 * (`AsyncHandlerFailures` by function).
 *
 * Locally (serverless offline sets IS_OFFLINE) the error is then swallowed:
 * offline does not catch a rejected `Event` invocation, so one throwing
 * message would end the whole process: every route, schedule and the NATS
 * bridge. On AWS it is rethrown, so Lambda's retries and on-failure
 * destinations still see the failure. Every new async handler must use it.
 */
export function asyncHandler<E = unknown, R = unknown>(log: Logger, core: (event: E, context: Context) => Promise<R>) {
  return invocationScope(
    middy<E, R | null>()
      .use({
        onError: async (request) => {
          log.error('async_handler_failed', { err: request.error });
          emitMetric('AsyncHandlerFailures', 1, {}, { error: request.error?.name });
          if (process.env.IS_OFFLINE !== 'true') throw request.error;
          // middy rethrows when the response is still undefined after onError: null marks it handled.
          request.response = null;
        },
      })
      // Inside the logging: a secret that cannot be read fails the invocation, logged, like any other error.
      .use(secretsBeforeInvocation())
      .handler(core),
  );
}

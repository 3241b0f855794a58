import middy from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { invocationScope, type Logger } from '../log';
import { secretsBeforeInvocation } from '../lambda/secrets';
import { httpErrors, type HttpMiddleware, requireAuthorizer } from './middlewares';
import type { HttpResult } from './response';

/**
 * The one way an HTTP handler is built: middy over a plain async function, in
 * its own log scope (request id, function, cold start, trace id on every line:
 * lib/log/context.ts), `httpErrors` outermost (its onError runs last, after
 * any middleware's own cleanup), then the function's secrets read at run time
 * (lib/secrets/runtime.ts, counted when unreadable: lib/lambda/secrets.ts),
 * then `requireAuthorizer`, then the route's own middlewares in order (e.g.
 * lib/idempotency's `idempotency`).
 */
export function httpHandler(
  log: Logger,
  core: (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>,
  options: { publicRoute?: boolean; use?: HttpMiddleware[] } = {},
) {
  const handler = middy<APIGatewayProxyEventV2, HttpResult>()
    .use(httpErrors(log))
    .use(secretsBeforeInvocation())
    .use(requireAuthorizer(log, options));
  for (const middleware of options.use ?? []) handler.use(middleware);
  return invocationScope(handler.handler(core));
}

import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Logger } from '../log';
import { ErrorCode, HttpError, toHttpError } from './errors';
import { type HttpResult, json } from './response';

/**
 * The JSON API's edge as named middy middlewares; `httpHandler` (handler.ts)
 * puts them in their order. Each is a plain object, usable alone in a test.
 */

export type HttpMiddleware = MiddlewareObj<APIGatewayProxyEventV2, HttpResult>;

/**
 * Refuses an event without our authorizer's context before the core runs: it
 * did not come through the API (the local Lambda invoke port runs handlers
 * directly, with no authorizer; on AWS a direct invoke is an IAM decision).
 * A public route (PUBLIC_ROUTES in lib/auth/scopes.ts) must prove the caller itself.
 */
export function requireAuthorizer(log: Logger, options: { publicRoute?: boolean } = {}): HttpMiddleware {
  return {
    name: 'requireAuthorizer',
    before: async (request) => {
      if (options.publicRoute || authorizedPrincipal(request.event)) return;
      log.warn('http_event_without_authorizer', {
        route: request.event?.routeKey,
        request_id: request.context?.awsRequestId,
      });
      throw new HttpError(401, ErrorCode.UNAUTHORIZED, 'the request did not pass the authorizer');
    },
  };
}

/** Every thrown error as `{error:{code,message}}` (toHttpError); a 5xx is logged with the error's class, a 4xx is the caller's and stays quiet. */
export function httpErrors(log: Logger): HttpMiddleware {
  return {
    name: 'httpErrors',
    onError: async (request) => {
      const { status, body, headers } = toHttpError(request.error);
      if (status >= 500)
        log.error('http_request_failed', {
          route: request.event?.routeKey,
          err: request.error,
          request_id: request.context?.awsRequestId,
        });
      request.response = json(status, body, headers);
    },
  };
}

/** The principal our authorizer put in the context (payload 2.0: `requestContext.authorizer.lambda`), if any. */
export function authorizedPrincipal(event: unknown): string | undefined {
  const principal = (event as { requestContext?: { authorizer?: { lambda?: { principal?: unknown } } } } | null)
    ?.requestContext?.authorizer?.lambda?.principal;
  return typeof principal === 'string' && principal.length > 0 ? principal : undefined;
}

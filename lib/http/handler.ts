import middy from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { Logger } from '../log';
import { ErrorCode, HttpError, toHttpError } from './errors';
import { HttpResult, json } from './response';

/**
 * The one way an HTTP handler is built: middy over a plain async function,
 * with every thrown error turned into `{error:{code,message}}` by toHttpError.
 * 5xx are logged with the error's class; 4xx are the caller's and stay quiet.
 *
 * An event without the authorizer's context is refused before the core runs:
 * it did not come through the API (the local Lambda invoke port runs handlers
 * directly, with no authorizer; on AWS a direct invoke is an IAM decision).
 */
export function httpHandler(
  log: Logger,
  core: (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>,
  // Only for a route of PUBLIC_ROUTES (lib/auth/scopes.ts): it must prove the caller itself (the webhook's secret).
  options: { publicRoute?: boolean } = {},
) {
  return middy<APIGatewayProxyEventV2, HttpResult>()
    .use({
      before: async (request) => {
        if (options.publicRoute || authorizedPrincipal(request.event)) return;
        log.warn('http_event_without_authorizer', {
          route: request.event?.routeKey,
          request_id: request.context?.awsRequestId,
        });
        throw new HttpError(401, ErrorCode.UNAUTHORIZED, 'the request did not pass the authorizer');
      },
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
    })
    .handler(core);
}

/** The principal our authorizer put in the context (payload 2.0: `requestContext.authorizer.lambda`), if any. */
export function authorizedPrincipal(event: unknown): string | undefined {
  const principal = (event as { requestContext?: { authorizer?: { lambda?: { principal?: unknown } } } } | null)
    ?.requestContext?.authorizer?.lambda?.principal;
  return typeof principal === 'string' && principal.length > 0 ? principal : undefined;
}

import middy from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { Logger } from '../log';
import { toHttpError } from './errors';
import { HttpResult, json } from './response';

/**
 * The one way an HTTP handler is built: middy over a plain async function,
 * with every thrown error turned into `{error:{code,message}}` by toHttpError.
 * 5xx are logged with the error's class; 4xx are the caller's and stay quiet.
 */
export function httpHandler(log: Logger, core: (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>) {
  return middy<APIGatewayProxyEventV2, HttpResult>()
    .use({
      onError: async (request) => {
        const { status, body } = toHttpError(request.error);
        if (status >= 500) log.error('http_request_failed', { route: request.event.routeKey, err: request.error, request_id: request.context.awsRequestId });
        request.response = json(status, body);
      },
    })
    .handler(core);
}

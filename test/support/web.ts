import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { HttpResult } from '../../lib/http/response';

/** What the session authorizer hands a UI page: who, with which scopes, and the session's form token. */
export interface SessionContext {
  principal: string;
  scopes: string;
  csrf: string;
}

/**
 * Calls a deployed UI handler in-process, as API Gateway would after the
 * session authorizer allowed it (a form body when one is given): for tests
 * that count the storage calls a request makes.
 */
export function invokePage(
  handler: (event: APIGatewayProxyEventV2, context: Context) => Promise<HttpResult>,
  ctx: SessionContext,
  request: { method: string; routeKey: string; params: Record<string, string>; body?: string },
): Promise<HttpResult> {
  return handler(
    {
      routeKey: request.routeKey,
      rawPath: '/x',
      pathParameters: request.params,
      headers: { host: 'ui.test', 'content-type': 'application/x-www-form-urlencoded' },
      body: request.body,
      isBase64Encoded: false,
      requestContext: { http: { method: request.method }, authorizer: { lambda: ctx } },
    } as unknown as APIGatewayProxyEventV2,
    { awsRequestId: 'test' } as Context,
  );
}

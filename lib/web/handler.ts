import middy from '@middy/core';
import { secretsBeforeInvocation } from '../lambda/secrets';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { HttpResult } from '../http/response';
import { invocationScope, type Logger } from '../log';
import {
  csrfOnPost,
  htmlErrors,
  refuseAuthorizerOverride,
  sameOriginPost,
  sessionOrSignIn,
  webState,
} from './middlewares';
import { htmlResult, newNonce, redirect, SECURITY_HEADERS } from './responses';
import { layout, Page, Viewer } from './pages';

/**
 * The one way a UI page function is built: in its own log scope
 * (lib/log/context.ts), the middlewares of middlewares.ts in their order
 * (errors outermost; the secrets, the override header, the origin, the
 * session, the form token), then the page code, whose answer is rendered
 * here with this response's CSP nonce.
 */

export interface WebRequest {
  event: APIGatewayProxyEventV2;
  /** Absent on public pages. */
  viewer?: Viewer;
  /** POST only: the form's fields, the csrf field removed. */
  form: Record<string, string>;
  nonce: string;
}

export type WebAnswer =
  | { page: Page; status?: number; viewer?: Viewer; cookies?: string[] }
  | { redirect: string; cookies?: string[] }
  /** A stored file served through the service (never a public URL), as a download. */
  | { file: { body: string; contentType: string; name: string } };

export function webHandler(
  log: Logger,
  core: (request: WebRequest) => Promise<WebAnswer>,
  opts: { public?: boolean; notFound?: string } = {},
) {
  const handler = middy<APIGatewayProxyEventV2, HttpResult>()
    .use(htmlErrors(log, opts.notFound))
    .use(secretsBeforeInvocation())
    .use(refuseAuthorizerOverride())
    .use(sameOriginPost());
  if (!opts.public) handler.use(sessionOrSignIn());
  return invocationScope(
    handler.use(csrfOnPost()).handler(async (event: APIGatewayProxyEventV2, _context: Context) => {
      const { viewer, form } = webState(event);
      const nonce = newNonce();
      return render(await core({ event, viewer, form, nonce }), viewer, nonce);
    }),
  );
}

function render(answer: WebAnswer, viewer: Viewer | undefined, nonce: string): HttpResult {
  if ('redirect' in answer) return redirect(answer.redirect, answer.cookies);
  if ('file' in answer)
    return {
      statusCode: 200,
      headers: {
        ...SECURITY_HEADERS,
        'content-type': answer.file.contentType,
        'content-disposition': `attachment; filename="${answer.file.name.replace(/[^A-Za-z0-9._-]/g, '_')}"`,
        'content-security-policy': "default-src 'none'; sandbox",
      },
      body: answer.file.body,
    };
  return htmlResult(
    answer.status ?? 200,
    layout(answer.page, { nonce, viewer: answer.viewer ?? viewer }),
    nonce,
    answer.cookies,
  );
}

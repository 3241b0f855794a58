import middy from '@middy/core';
import { secretsBeforeInvocation } from '../lambda/secrets';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { HttpResult } from '../http/response';
import { invocationScope, type Logger } from '../log';
import {
  csrfOnPost,
  htmlErrors,
  language,
  refuseAuthorizerOverride,
  sameOriginPost,
  sessionOrSignIn,
  webState,
} from './middlewares';
import type { FileForms, FormFile } from './forms';
import type { Ui } from './locale';
import { htmlResult, newNonce, redirect, SECURITY_HEADERS } from './responses';
import { layout, Page, Viewer } from './shell';

/**
 * The one way a UI page function is built: in its own log scope
 * (lib/log/context.ts), the middlewares of middlewares.ts in their order
 * (errors outermost; the language, the secrets, the override header, the
 * origin, the session, the form token), then the page code, whose answer is
 * rendered here in the request's language with this response's CSP nonce.
 */

export interface WebRequest {
  event: APIGatewayProxyEventV2;
  /** Absent on public pages. */
  viewer?: Viewer;
  /** POST only: the form's fields, the csrf field removed. */
  form: Record<string, string>;
  /** POST only: the form's files (the routes of `opts.fileForms`, sent as multipart). */
  files: Record<string, FormFile>;
  nonce: string;
  /** The request's language and time zone. */
  ui: Ui;
}

export type WebAnswer =
  | { page: Page; status?: number; viewer?: Viewer; cookies?: string[] }
  | { redirect: string; cookies?: string[] }
  /** A stored file served through the service (never a public URL), as a download. */
  | { file: { body: string; contentType: string; name: string } };

export function webHandler(
  log: Logger,
  core: (request: WebRequest) => Promise<WebAnswer>,
  opts: {
    public?: boolean;
    notFound?: 'noSuchDownload' | 'noSuchItem';
    /** Routes whose form has a file input, with their body bound (lib/web/forms.ts). */
    fileForms?: FileForms;
  } = {},
) {
  const handler = middy<APIGatewayProxyEventV2, HttpResult>()
    .use(htmlErrors(log, opts.notFound))
    .use(language())
    .use(secretsBeforeInvocation())
    .use(refuseAuthorizerOverride())
    .use(sameOriginPost());
  if (!opts.public) handler.use(sessionOrSignIn());
  return invocationScope(
    handler.use(csrfOnPost(opts.fileForms)).handler(async (event: APIGatewayProxyEventV2, _context: Context) => {
      const { viewer, form, files, ui, langCookie } = webState(event);
      const nonce = newNonce();
      const answer = await core({ event, viewer, form, files, nonce, ui: ui! });
      return render(answer, { viewer, nonce, ui: ui!, here: here(event), langCookie });
    }),
  );
}

/** This page's path and query (the `lang` field already taken out), for the language links. */
function here(event: APIGatewayProxyEventV2): string {
  const query = new URLSearchParams(
    Object.entries(event.queryStringParameters ?? {}).filter((e): e is [string, string] => e[1] !== undefined),
  ).toString();
  return query ? `${event.rawPath}?${query}` : event.rawPath;
}

interface RenderContext {
  viewer?: Viewer;
  nonce: string;
  ui: Ui;
  here: string;
  langCookie?: string;
}

function render(answer: WebAnswer, ctx: RenderContext): HttpResult {
  const { viewer, nonce, ui } = ctx;
  const withLang = (cookies?: string[]) => (ctx.langCookie ? [...(cookies ?? []), ctx.langCookie] : cookies);
  if ('redirect' in answer) return redirect(answer.redirect, withLang(answer.cookies));
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
    layout(answer.page, { nonce, ui, viewer: answer.viewer ?? viewer, here: ctx.here }),
    nonce,
    withLang(answer.cookies),
  );
}

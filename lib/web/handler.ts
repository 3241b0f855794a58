import middy from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { ErrorCode, HttpError, toHttpError } from '../http/errors';
import { header } from '../http/request';
import type { HttpResult } from '../http/response';
import type { Logger } from '../log';
import { formBody } from './forms';
import { layout, messagePage, Notice, Page, Viewer } from './pages';

/**
 * The one way a UI page function is built. Before any page code runs it:
 * refuses offline's authorizer-override header (it would let a local client
 * forge the session context); sends a browser without a session to sign-in
 * (the authorizer lets such requests through for exactly this, since API
 * Gateway cannot redirect); and, for a POST, checks the origin and the
 * session's form token. Errors are mapped by lib/http `toHttpError`, the
 * API's own mapping, and rendered as a page.
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

interface AuthorizerContext {
  principal?: string;
  scopes?: string;
  csrf?: string;
}

export const OVERRIDE_HEADER = 'sls-offline-authorizer-override';

export function webHandler(
  log: Logger,
  core: (request: WebRequest) => Promise<WebAnswer>,
  opts: { public?: boolean; notFound?: string } = {},
) {
  return middy<APIGatewayProxyEventV2, HttpResult>()
    .use({
      onError: async (request) => {
        const { status, body } = toHttpError(request.error);
        if (status >= 500)
          log.error('web_request_failed', {
            route: request.event.routeKey,
            err: request.error,
            request_id: request.context.awsRequestId,
          });
        const nonce = newNonce();
        const page =
          status === 404
            ? messagePage('Not found', opts.notFound ?? 'There is no such download.')
            : messagePage(`Refused (${body.error.code})`, body.error.message);
        request.response = htmlResult(status, layout(page, { nonce }), nonce);
      },
    })
    .handler(async (event: APIGatewayProxyEventV2, _context: Context) => {
      if (header(event.headers, OVERRIDE_HEADER) !== undefined)
        throw new HttpError(400, ErrorCode.INVALID_REQUEST, `the ${OVERRIDE_HEADER} header is refused`);
      const post = event.requestContext.http.method === 'POST';
      if (post) checkOrigin(event);
      let viewer: Viewer | undefined;
      if (!opts.public) {
        const ctx = ((event.requestContext as { authorizer?: { lambda?: AuthorizerContext } }).authorizer?.lambda ??
          {}) as AuthorizerContext;
        if (!ctx.principal) return redirect(post ? '/signin' : signInFor(event.rawPath));
        const scopes = (ctx.scopes ?? '').split(' ').filter(Boolean);
        viewer = {
          principal: ctx.principal,
          canWrite: scopes.includes('downloads:write'),
          scopes,
          csrf: ctx.csrf ?? '',
        };
      }
      const form = post ? formBody(event) : {};
      if (post && viewer) {
        if (!sameSecret(form.csrf, viewer.csrf))
          throw new HttpError(
            403,
            ErrorCode.FORBIDDEN,
            'the form is out of date or was not sent from this site: reload the page and try again',
          );
        delete form.csrf;
      }
      const nonce = newNonce();
      const answer = await core({ event, viewer, form, nonce });
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
    });
}

/** A state-changing request must come from our own pages: a foreign Origin (or a cross-site fetch) is refused. */
function checkOrigin(event: APIGatewayProxyEventV2): void {
  const origin = header(event.headers, 'origin');
  const host = header(event.headers, 'host');
  const site = header(event.headers, 'sec-fetch-site');
  let sameHost = true;
  if (origin !== undefined) {
    try {
      sameHost = origin !== 'null' && new URL(origin).host === host;
    } catch {
      sameHost = false;
    }
  }
  if (!sameHost || (site !== undefined && site !== 'same-origin' && site !== 'none')) {
    throw new HttpError(403, ErrorCode.FORBIDDEN, 'a form sent from another site is refused');
  }
}

function sameSecret(presented: string | undefined, expected: string): boolean {
  if (!presented || !expected) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const PAGE_PATH =
  /^\/(?:(?:download|review)\/[0-9A-Za-z]{26}|scan(?:\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})?|sync(?:\/[0-9A-Za-z]{26})?|failures)?$/;

/** Where sign-in sends the browser back to: only a page path of ours, never a URL from outside. */
export function safeNext(path: string | undefined): string | undefined {
  return path && PAGE_PATH.test(path) ? path : undefined;
}

function signInFor(path: string): string {
  const next = safeNext(path);
  return next && next !== '/' ? `/signin?next=${encodeURIComponent(next)}` : '/signin';
}

function newNonce(): string {
  return randomBytes(16).toString('base64');
}

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

export function htmlResult(statusCode: number, body: string, nonce: string, cookies?: string[]): HttpResult {
  return {
    statusCode,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      // Inline style and script run only with this response's nonce: injected markup could not run script even if escaping failed.
      'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
      ...SECURITY_HEADERS,
    },
    ...(cookies ? { cookies } : {}),
    body,
  };
}

function redirect(location: string, cookies?: string[]): HttpResult {
  return { statusCode: 303, headers: { location, ...SECURITY_HEADERS }, ...(cookies ? { cookies } : {}), body: '' };
}

/** A refusal of the API's mapping, as the page shows it. */
export function noticeOf(err: unknown): { status: number; notice: Notice } {
  const { status, body } = toHttpError(err);
  const owner = typeof body.error.owner_id === 'string' ? body.error.owner_id : undefined;
  return { status, notice: { code: body.error.code, message: body.error.message, ownerId: owner } };
}

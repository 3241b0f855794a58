import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { timingSafeEqual } from 'node:crypto';
import { ErrorCode, HttpError, toHttpError } from '../http/errors';
import { header } from '../http/request';
import type { HttpResult } from '../http/response';
import type { Logger } from '../log';
import { formParts, type FileForms, type FormFile } from './forms';
import { negotiateUi, safeUi, type Ui } from './locale';
import { homeOf, mayOpen, scopeOf } from './roles';
import { forbiddenPage, layout, messagePage, type Viewer } from './shell';
import { htmlResult, newNonce, redirect } from './responses';

/**
 * The UI's edge as named middy middlewares; `webHandler` (handler.ts) puts
 * them in their order, so before any page code runs: offline's
 * authorizer-override header is refused (it would let a local client forge
 * the session context); a POST from another site is refused; a browser
 * without a session goes to sign-in (the authorizer lets such requests
 * through for exactly this, since API Gateway cannot redirect); a POST's form
 * token is checked against the session's. Errors are mapped by lib/http
 * `toHttpError`, the API's own mapping, and rendered as a page.
 */

export type WebMiddleware = MiddlewareObj<APIGatewayProxyEventV2, HttpResult>;

/** What the middlewares learnt of a request, for the page code: per event object, so invocations never share it. */
export interface WebState {
  /** The request's language and zone (`language`); error pages negotiate their own when it never ran. */
  ui?: Ui;
  /** The cookie keeping a language chosen by `?lang=`, sent with the answer. */
  langCookie?: string;
  /** Absent on public pages. */
  viewer?: Viewer;
  /** POST only: the form's fields, the csrf field removed. */
  form: Record<string, string>;
  /** POST only: the form's files (a route of the handler's `fileForms`, sent as multipart). */
  files: Record<string, FormFile>;
}
const states = new WeakMap<APIGatewayProxyEventV2, WebState>();
export function webState(event: APIGatewayProxyEventV2): WebState {
  let state = states.get(event);
  if (!state) states.set(event, (state = { form: {}, files: {} }));
  return state;
}

interface AuthorizerContext {
  principal?: string;
  scopes?: string;
  csrf?: string;
  /** Set by the authorizer for a session on a page its scopes do not open (lib/auth/gateway.ts). */
  denied?: string;
}

export const OVERRIDE_HEADER = 'sls-offline-authorizer-override';

export function refuseAuthorizerOverride(): WebMiddleware {
  return {
    name: 'refuseAuthorizerOverride',
    before: async ({ event }) => {
      if (header(event.headers, OVERRIDE_HEADER) !== undefined)
        throw new HttpError(400, ErrorCode.INVALID_REQUEST, `the ${OVERRIDE_HEADER} header is refused`);
    },
  };
}

/** A state-changing request must come from our own pages: a foreign Origin (or a cross-site fetch) is refused. */
export function sameOriginPost(): WebMiddleware {
  return {
    name: 'sameOriginPost',
    before: async ({ event }) => {
      if (isPost(event)) checkOrigin(event);
    },
  };
}

/** The request's language and time zone, and the `?lang=` choice's cookie (lib/web/locale.ts). */
export function language(): WebMiddleware {
  return {
    name: 'language',
    before: async ({ event }) => {
      const { ui, cookie } = negotiateUi(event);
      Object.assign(webState(event), { ui, langCookie: cookie });
    },
  };
}

/**
 * The viewer from the authorizer's context; without a session, a redirect to
 * sign-in (the page never runs). The route's scope is checked again here
 * against the same table the authorizer used, so a session on a page its
 * scopes do not open gets a 403 page, and `/` sends a scan- or sync-only
 * operator to their own start page.
 */
export function sessionOrSignIn(): WebMiddleware {
  return {
    name: 'sessionOrSignIn',
    before: async ({ event }) => {
      const ctx = ((event.requestContext as { authorizer?: { lambda?: AuthorizerContext } }).authorizer?.lambda ??
        {}) as AuthorizerContext;
      if (!ctx.principal) return redirect(isPost(event) ? '/signin' : signInFor(event.rawPath));
      const scopes = (ctx.scopes ?? '').split(' ').filter(Boolean);
      const state = webState(event);
      const viewer = {
        principal: ctx.principal,
        canWrite: scopes.includes('downloads:write'),
        scopes,
        csrf: ctx.csrf ?? '',
      };
      state.viewer = viewer;
      if (ctx.denied || !mayOpen(scopes, event.routeKey)) {
        const home = homeOf(scopes);
        if (event.routeKey === 'GET /' && home) return redirect(home);
        const ui = state.ui ?? safeUi(event);
        const nonce = newNonce();
        const page = forbiddenPage(ui, ctx.denied || scopeOf(event.routeKey), home);
        return htmlResult(403, layout(page, { nonce, ui, viewer, here: event.rawPath }), nonce);
      }
    },
  };
}

/** A POST's fields; with a session, its form token must be the session's (then it is removed from the fields). */
export function csrfOnPost(fileForms: FileForms = {}): WebMiddleware {
  return {
    name: 'csrfOnPost',
    before: async ({ event }) => {
      if (!isPost(event)) return;
      const state = webState(event);
      const { fields: form, files } = formParts(event, fileForms);
      if (state.viewer) {
        if (!sameSecret(form.csrf, state.viewer.csrf))
          throw new HttpError(
            403,
            ErrorCode.FORBIDDEN,
            'the form is out of date or was not sent from this site: reload the page and try again',
          );
        delete form.csrf;
      }
      state.form = form;
      state.files = files;
    },
  };
}

/** Any error as a page with the API's status and code; a 5xx is logged. */
export function htmlErrors(log: Logger, notFound: 'noSuchDownload' | 'noSuchItem' = 'noSuchDownload'): WebMiddleware {
  return {
    name: 'htmlErrors',
    onError: async (request) => {
      const { status, body } = toHttpError(request.error);
      if (status >= 500)
        log.error('web_request_failed', {
          route: request.event.routeKey,
          err: request.error,
          request_id: request.context.awsRequestId,
        });
      const state = webState(request.event);
      const ui = state.ui ?? safeUi(request.event);
      const home = (state.viewer && homeOf(state.viewer.scopes)) ?? '/';
      const nonce = newNonce();
      const page =
        status === 404
          ? messagePage(ui, ui.t.notFound, ui.t[notFound], home)
          : messagePage(ui, ui.t.refused({ code: body.error.code }), body.error.message, home);
      request.response = htmlResult(status, layout(page, { nonce, ui, viewer: state.viewer }), nonce);
    },
  };
}

const isPost = (event: APIGatewayProxyEventV2) => event.requestContext.http.method === 'POST';

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
  /^\/(?:download|(?:download|review)\/[0-9A-Za-z]{26}|scan(?:\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})?|sync(?:\/[0-9A-Za-z]{26})?|failures)?$/;

/** Where sign-in sends the browser back to: only a page path of ours, never a URL from outside. */
export function safeNext(path: string | undefined): string | undefined {
  return path && PAGE_PATH.test(path) ? path : undefined;
}

function signInFor(path: string): string {
  const next = safeNext(path);
  return next && next !== '/' ? `/signin?next=${encodeURIComponent(next)}` : '/signin';
}

import { grantForToken } from '../../lib/auth/authorize';
import { issueSession, sessionCookie } from '../../lib/auth/session';
import { systemClock } from '../../lib/clock';
import { loadAuthConfig, loadSessionKeyring } from '../../lib/auth/config';
import { perEnvironment } from '../../lib/config';
import { header, validator } from '../../lib/http/request';
import { createLogger, redactValue } from '../../lib/log';
import { webHandler } from '../../lib/web/handler';
import { safeNext } from '../../lib/web/middlewares';
import { signInPage } from '../../lib/web/pages';
import { homeOf } from '../../lib/web/roles';

/**
 * GET /signin: the form. POST /signin: an API token in the form body (never
 * the URL) opens an 8-hour session cookie for its grant; the token itself is
 * neither kept nor logged. Public routes: the origin check of webHandler
 * still refuses a sign-in posted from another site.
 */

const log = createLogger({ domain: 'web' });

const loadSettings = perEnvironment(() => ({ auth: loadAuthConfig(), keys: loadSessionKeyring() }));

const parseSignIn = validator<{ token: string; next?: string }>({
  type: 'object',
  properties: { token: { type: 'string', minLength: 1, maxLength: 600 }, next: { type: 'string', maxLength: 64 } },
  required: ['token'],
  additionalProperties: false,
});
const parseSignInQuery = validator<{ next?: string }>({
  type: 'object',
  properties: { next: { type: 'string', maxLength: 64 } },
  additionalProperties: false,
});

export const handler = webHandler(
  log,
  async ({ event, form, ui }) => {
    if (event.requestContext.http.method !== 'POST') {
      return { page: signInPage(ui, { next: safeNext(parseSignInQuery(event.queryStringParameters ?? {}).next) }) };
    }
    const { token, next } = parseSignIn(form);
    redactValue(token.trim());
    const { auth, keys } = loadSettings();
    const now = systemClock();
    const grant = grantForToken(auth.grants, token.trim(), now);
    if (!grant) {
      log.warn('web_signin_refused', { reason: 'unknown' });
      return {
        status: 401,
        page: signInPage(ui, {
          next: safeNext(next),
          notice: { code: 'UNAUTHORIZED', message: ui.t.tokenUnknown },
        }),
      };
    }
    // Any read scope that opens a page signs in (decision 331); the session then sees only those pages.
    const home = homeOf(grant.scopes);
    if (!home) {
      log.warn('web_signin_refused', { reason: 'scope', principal: grant.name });
      return {
        status: 403,
        page: signInPage(ui, {
          next: safeNext(next),
          notice: { code: 'FORBIDDEN', message: ui.t.tokenNoPage },
        }),
      };
    }
    const { value, maxAge } = issueSession(keys, grant, now);
    log.info('web_signed_in', { principal: grant.name });
    return { redirect: safeNext(next) ?? home, cookies: [sessionCookie(value, maxAge, header(event.headers, 'host'))] };
  },
  { public: true },
);

import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { authorize, authorizeSession } from '../../lib/auth/authorize';
import { gatewayAnswer } from '../../lib/auth/gateway';
import { SESSION_ROUTES } from '../../lib/auth/scopes';
import { systemClock } from '../../lib/clock';
import { loadAuthConfig, loadSessionKeyring } from '../../lib/auth/config';
import { perEnvironment } from '../../lib/config';
import { refreshSecrets } from '../../lib/secrets/runtime';
import { createLogger } from '../../lib/log';
import { header } from '../../lib/http/request';

/**
 * The HTTP API's Lambda authorizer (REQUEST, payload 2.0, no caching: the
 * decision depends on the route). API routes take the bearer token; UI routes
 * (SESSION_ROUTES) take the session cookie. Logs who was refused and why,
 * never the token or the cookie.
 */

const log = createLogger({ domain: 'auth' });

// Parsed again only after a secret changed (a revoked token, a rotated session key): lib/secrets/runtime.ts.
const grants = perEnvironment(() => loadAuthConfig().grants);
const sessionKeys = perEnvironment(loadSessionKeyring);

export async function handler(event: APIGatewayRequestAuthorizerEventV2): Promise<APIGatewayAuthorizerResult> {
  const web = SESSION_ROUTES.includes(event.routeKey);
  let settings;
  try {
    await refreshSecrets();
    settings = { grants: grants(), sessionKeys: web ? sessionKeys() : undefined };
  } catch (err) {
    // Fail closed: a bad or unreadable AUTH_TOKENS (or SESSION_KEYS, for the UI) refuses everyone, loudly.
    log.error('auth_config_invalid', { err });
    throw err;
  }
  const now = systemClock();
  const decision = web
    ? authorizeSession(
        settings.grants,
        settings.sessionKeys!,
        event.cookies ?? header(event.headers, 'cookie'),
        event.routeKey,
        now,
      )
    : authorize(
        settings.grants,
        event.identitySource?.[0] ?? header(event.headers, 'authorization'),
        event.routeKey,
        now,
      );
  if (decision.effect !== 'allow') {
    log.warn('auth_refused', {
      route: event.routeKey,
      effect: decision.effect,
      reason: decision.reason,
      principal: 'principal' in decision ? decision.principal : undefined,
    });
  }
  return gatewayAnswer(decision, event.routeArn);
}

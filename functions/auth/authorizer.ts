import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { authorize, authorizeSession } from '../../lib/auth/authorize';
import { gatewayAnswer } from '../../lib/auth/gateway';
import { SESSION_ROUTES } from '../../lib/auth/scopes';
import { systemClock } from '../../lib/clock';
import { loadAuthConfig, loadSessionKeyring } from '../../lib/auth/config';
import { perEnvironment } from '../../lib/config';
import { refreshSecrets } from '../../lib/secrets/runtime';
import { createLogger, invocationScope, redactValue } from '../../lib/log';
import { emitMetric } from '../../lib/metrics';
import { header } from '../../lib/http/request';

/**
 * The HTTP API's Lambda authorizer (REQUEST, payload 2.0; on AWS the bearer
 * decisions are cached by token AND route key, so the policy names the route's
 * pattern, lib/auth/gateway.ts). API routes take the bearer token; UI routes
 * (SESSION_ROUTES) take the session cookie. Logs who was refused and why,
 * never the token or the cookie: both are registered with the log's
 * redaction for the invocation, so not even an error's message can print them.
 */

const log = createLogger({ domain: 'auth' });

// Parsed again only after a secret changed (a revoked token, a rotated session key): lib/secrets/runtime.ts.
const grants = perEnvironment(() => loadAuthConfig().grants);
const sessionKeys = perEnvironment(loadSessionKeyring);

export const handler = invocationScope(authorizer);

async function authorizer(event: APIGatewayRequestAuthorizerEventV2): Promise<APIGatewayAuthorizerResult> {
  const web = SESSION_ROUTES.includes(event.routeKey);
  const credential = web
    ? (event.cookies ?? header(event.headers, 'cookie'))
    : (event.identitySource?.[0] ?? header(event.headers, 'authorization'));
  for (const part of credentialParts(credential)) redactValue(part);
  let settings;
  try {
    await refreshSecrets().catch((err: unknown) => {
      emitMetric('SecretsReadFailures', 1, {}, { error: (err as Error)?.name });
      throw err;
    });
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
        credential,
        event.routeKey,
        now,
        header(event.headers, 'host'),
      )
    : authorize(settings.grants, credential as string | undefined, event.routeKey, now);
  if (decision.effect !== 'allow') {
    log.warn('auth_refused', {
      route: event.routeKey,
      effect: decision.effect,
      reason: 'reason' in decision ? decision.reason : 'scope',
      principal: 'principal' in decision ? decision.principal : undefined,
    });
  }
  return gatewayAnswer(decision, event.routeArn, event.routeKey);
}

/** The header, the bearer token, each cookie and its value: what no line of this invocation may print. */
function credentialParts(credential: string | string[] | undefined): string[] {
  const texts = Array.isArray(credential) ? credential : credential ? [credential] : [];
  const parts = texts.flatMap((text) =>
    text.split(/[;\s]+/).flatMap((part) => [part, part.slice(part.indexOf('=') + 1)]),
  );
  // Words like `Bearer` are not secrets: only what is long enough to be a token or a cookie's value.
  return [...texts, ...parts].filter((part) => part.length >= 16);
}

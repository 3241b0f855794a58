import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { authorize } from '../../lib/auth/authorize';
import { gatewayAnswer } from '../../lib/auth/gateway';
import { AuthConfig, loadAuthConfig } from '../../lib/config';
import { createLogger } from '../../lib/log';

/**
 * The HTTP API's Lambda authorizer (REQUEST, payload 2.0, no caching: the
 * decision depends on the route). Logs who was refused and why, never the token.
 */

const log = createLogger({ domain: 'auth' });

let settings: AuthConfig | undefined;

export async function handler(event: APIGatewayRequestAuthorizerEventV2): Promise<APIGatewayAuthorizerResult> {
  try {
    settings ??= loadAuthConfig();
  } catch (err) {
    // Fail closed: a bad AUTH_TOKENS refuses everyone, loudly.
    log.error('auth_config_invalid', { err });
    throw err;
  }
  const decision = authorize(settings.grants, event.identitySource?.[0] ?? event.headers?.authorization, event.routeKey, Date.now());
  if (decision.effect !== 'allow') {
    log.warn('auth_refused', { route: event.routeKey, effect: decision.effect, reason: decision.reason, principal: decision.principal });
  }
  return gatewayAnswer(decision, event.routeArn);
}

import { timingSafeEqual } from 'node:crypto';
import { ROUTE_SCOPES } from './scopes';
import { Scope, TokenGrant, tokenHash } from './tokens';

/**
 * The authorizer's decision, free of Lambda: 401 when the caller is not
 * authenticated (no token, garbled, unknown or expired), 403 when the token is
 * good but lacks the route's scope.
 */
export type Decision =
  | { effect: 'allow'; principal: string; scope: Scope }
  | { effect: 'unauthenticated'; reason: 'missing' | 'malformed' | 'unknown' | 'expired'; principal?: string }
  | { effect: 'forbidden'; reason: 'scope' | 'unknown-route'; principal: string; scope?: Scope };

// RFC 6750 b64token, bounded: a longer header is refused before it is hashed.
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]{16,512}=*) *$/i;
const MAX_HEADER = 600;

export function authorize(grants: readonly TokenGrant[], authorization: string | undefined, routeKey: string, now: number): Decision {
  if (!authorization) return { effect: 'unauthenticated', reason: 'missing' };
  const token = authorization.length <= MAX_HEADER ? BEARER.exec(authorization)?.[1] : undefined;
  if (!token) return { effect: 'unauthenticated', reason: 'malformed' };
  const grant = findGrant(grants, token);
  if (!grant) return { effect: 'unauthenticated', reason: 'unknown' };
  if (grant.expiresAt !== undefined && now >= grant.expiresAt) return { effect: 'unauthenticated', reason: 'expired', principal: grant.name };
  const scope = ROUTE_SCOPES[routeKey];
  if (!scope) return { effect: 'forbidden', reason: 'unknown-route', principal: grant.name };
  if (!grant.scopes.includes(scope)) return { effect: 'forbidden', reason: 'scope', principal: grant.name, scope };
  return { effect: 'allow', principal: grant.name, scope };
}

/** Compares the token's hash with EVERY grant in constant time: no early exit tells which came close. */
function findGrant(grants: readonly TokenGrant[], token: string): TokenGrant | undefined {
  const presented = Buffer.from(tokenHash(token), 'hex');
  let found: TokenGrant | undefined;
  for (const grant of grants) {
    if (timingSafeEqual(presented, Buffer.from(grant.sha256, 'hex')) && !found) found = grant;
  }
  return found;
}

import { timingSafeEqual } from 'node:crypto';
import type { Keyring } from '../secrets/sealer';
import { ANY_SESSION, ROUTE_SCOPES, RouteScope, SESSION_ROUTES } from './scopes';
import { checkSession, readCookie, sessionCookieName } from './session';
import { Scope, TokenGrant, tokenHash } from './tokens';

/**
 * The authorizer's decision, free of Lambda: 401 when the caller is not
 * authenticated (no token, garbled, unknown or expired), 403 when the token is
 * good but lacks the route's scope.
 */
export type Decision =
  | { effect: 'allow'; principal: string; scope: RouteScope; scopes?: Scope[]; csrf?: string }
  /**
   * A session on a UI page its scopes do not open (GET only): let through so
   * the page answers 403 with a page saying why, in the person's language (API
   * Gateway's own 403 is a bare JSON body). lib/web's `sessionOrSignIn` refuses
   * it before any page code runs (decision 332).
   */
  | { effect: 'page-forbidden'; principal: string; scope: RouteScope; scopes: Scope[]; csrf: string }
  /** A browser without a valid session on a UI route: let through ONLY so the page can redirect to sign-in. */
  | { effect: 'anonymous'; reason: 'missing' | 'malformed' | 'forged' | 'expired' | 'revoked' }
  | { effect: 'unauthenticated'; reason: 'missing' | 'malformed' | 'unknown' | 'expired'; principal?: string }
  | { effect: 'forbidden'; reason: 'scope' | 'unknown-route'; principal: string; scope?: RouteScope };

// RFC 6750 b64token, bounded: a longer header is refused before it is hashed.
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]{16,512}=*) *$/i;
const MAX_HEADER = 600;

export function authorize(
  grants: readonly TokenGrant[],
  authorization: string | undefined,
  routeKey: string,
  now: number,
): Decision {
  if (!authorization) return { effect: 'unauthenticated', reason: 'missing' };
  const token = authorization.length <= MAX_HEADER ? BEARER.exec(authorization)?.[1] : undefined;
  if (!token) return { effect: 'unauthenticated', reason: 'malformed' };
  const grant = findGrant(grants, token);
  if (!grant) return { effect: 'unauthenticated', reason: 'unknown' };
  if (SESSION_ROUTES.includes(routeKey)) return { effect: 'forbidden', reason: 'unknown-route', principal: grant.name };
  if (grant.expiresAt !== undefined && now >= grant.expiresAt)
    return { effect: 'unauthenticated', reason: 'expired', principal: grant.name };
  const scope = ROUTE_SCOPES[routeKey];
  if (!scope) return { effect: 'forbidden', reason: 'unknown-route', principal: grant.name };
  if (scope === ANY_SESSION || !grant.scopes.includes(scope))
    return { effect: 'forbidden', reason: 'scope', principal: grant.name, scope };
  return { effect: 'allow', principal: grant.name, scope };
}

/**
 * A UI route: the session cookie decides, with the same scope table as the
 * API. No valid session is `anonymous` (the page answers with a redirect to
 * sign-in and does nothing else); a session without the scope is forbidden.
 */
export function authorizeSession(
  grants: readonly TokenGrant[],
  keyring: Keyring,
  cookies: readonly string[] | string | undefined,
  routeKey: string,
  now: number,
  /** The request's Host: the cookie is read under its name for that host alone (session.ts sessionCookieName). */
  host: string | undefined,
): Decision {
  const scope = ROUTE_SCOPES[routeKey];
  if (!scope || !SESSION_ROUTES.includes(routeKey)) return { effect: 'unauthenticated', reason: 'malformed' };
  const check = checkSession(keyring, grants, readCookie(cookies, sessionCookieName(host)), now);
  if (!check.ok) return { effect: 'anonymous', reason: check.reason };
  const principal = check.grant.name;
  if (scope !== ANY_SESSION && !check.grant.scopes.includes(scope)) {
    if (!routeKey.startsWith('GET ')) return { effect: 'forbidden', reason: 'scope', principal, scope };
    return { effect: 'page-forbidden', principal, scope, scopes: check.grant.scopes, csrf: check.session.csrf };
  }
  return { effect: 'allow', principal, scope, scopes: check.grant.scopes, csrf: check.session.csrf };
}

/** The grant a presented API token stands for, if any and not expired (sign-in uses it). */
export function grantForToken(grants: readonly TokenGrant[], token: string, now: number): TokenGrant | undefined {
  if (!/^[A-Za-z0-9._~+/-]{16,512}=*$/.test(token)) return undefined;
  const grant = findGrant(grants, token);
  return grant && (grant.expiresAt === undefined || now < grant.expiresAt) ? grant : undefined;
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

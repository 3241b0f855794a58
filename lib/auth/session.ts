import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Keyring } from '../secrets/sealer';
import { TokenGrant } from './tokens';

/**
 * Browser sessions: a signed cookie, no server-side state, so checking one
 * costs no storage call (a malformed page id stays a 404 with zero calls).
 *
 *   __Host-tss_session = "v1.<key id>.<payload>.<mac>"   (base64url; mac = HMAC-SHA256 under SESSION_KEYS)
 *   payload     = {sub: grant name, gh: first 16 hex of the grant's hash, exp: epoch s, csrf: nonce}
 *
 * The session names the API token it was opened with (`gh`), and scopes are
 * read from that grant on every request: removing or re-issuing the token in
 * AUTH_TOKENS ends its sessions, and a session never outlives its token.
 * The cookie never carries the token itself.
 */

/**
 * The cookie's name on every host but loopback: the `__Host-` prefix makes
 * browsers keep it only as Secure, Path=/ and without Domain, so neither a
 * sibling subdomain nor a plain-http answer can plant or shadow a session.
 */
export const SESSION_COOKIE = '__Host-tss_session';
/**
 * On a loopback host over plain http (`npm start`) a `__Host-` cookie cannot be had (it must be Secure, which
 * not every browser stores from http://127.0.0.1): the stack's session has this name there, and only there.
 */
export const LOCAL_SESSION_COOKIE = 'tss_session';

/** The session cookie's name for a request to `host` (its Host header; decision 385). */
export const sessionCookieName = (host: string | undefined) =>
  isLoopbackHost(host) ? LOCAL_SESSION_COOKIE : SESSION_COOKIE;
/** How long a session lasts after sign-in. */
export const SESSION_TTL_S = 8 * 3600;

export interface Session {
  sub: string;
  gh: string;
  exp: number;
  /** The synchronizer token of state-changing forms (docs/security.md). */
  csrf: string;
}

export type SessionCheck =
  | { ok: true; session: Session; grant: TokenGrant }
  | { ok: false; reason: 'missing' | 'malformed' | 'forged' | 'expired' | 'revoked' };

export function issueSession(
  keyring: Keyring,
  grant: TokenGrant,
  nowMs: number,
): { value: string; session: Session; maxAge: number } {
  let exp = Math.floor(nowMs / 1000) + SESSION_TTL_S;
  if (grant.expiresAt !== undefined) exp = Math.min(exp, Math.floor(grant.expiresAt / 1000));
  const session: Session = {
    sub: grant.name,
    gh: grant.sha256.slice(0, 16),
    exp,
    csrf: randomBytes(18).toString('base64url'),
  };
  const payload = Buffer.from(JSON.stringify(session)).toString('base64url');
  const head = `v1.${keyring.current}.${payload}`;
  return {
    value: `${head}.${mac(keyring.keys.get(keyring.current)!, head)}`,
    session,
    maxAge: Math.max(0, exp - Math.floor(nowMs / 1000)),
  };
}

const VALUE = /^v1\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]{10,600})\.([A-Za-z0-9_-]{43})$/;

/** Verifies a cookie value against the keyring and the CURRENT grants. */
export function checkSession(
  keyring: Keyring,
  grants: readonly TokenGrant[],
  value: string | undefined,
  nowMs: number,
): SessionCheck {
  if (!value) return { ok: false, reason: 'missing' };
  const parts = VALUE.exec(value);
  if (!parts) return { ok: false, reason: 'malformed' };
  const [, keyId, payload, presented] = parts;
  const key = keyring.keys.get(keyId);
  if (!key) return { ok: false, reason: 'forged' };
  const expected = Buffer.from(mac(key, `v1.${keyId}.${payload}`), 'utf8');
  if (!timingSafeEqual(expected, Buffer.from(presented, 'utf8'))) return { ok: false, reason: 'forged' };
  let session: Session;
  try {
    session = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Session;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (typeof session.exp !== 'number' || nowMs >= session.exp * 1000) return { ok: false, reason: 'expired' };
  const grant = grants.find((g) => g.name === session.sub && g.sha256.startsWith(session.gh));
  if (!grant || typeof session.gh !== 'string' || session.gh.length !== 16) return { ok: false, reason: 'revoked' };
  if (grant.expiresAt !== undefined && nowMs >= grant.expiresAt) return { ok: false, reason: 'expired' };
  return { ok: true, session, grant };
}

function mac(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text, 'utf8').digest('base64url');
}

/** The value of one cookie from a Cookie header (or API Gateway's `cookies` list); the first wins. */
export function readCookie(cookies: readonly string[] | string | undefined, name: string): string | undefined {
  if (!cookies) return undefined;
  const pairs = (typeof cookies === 'string' ? [cookies] : cookies).flatMap((c) => c.split(';'));
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/** Secure everywhere but a loopback host: a plain-http localhost would otherwise never get its cookie back. */
export function isLoopbackHost(host: string | undefined): boolean {
  const name = (host ?? '').toLowerCase().replace(/:\d+$/, '');
  return name === 'localhost' || name === '127.0.0.1' || name === '[::1]';
}

export function sessionCookie(value: string, maxAge: number, host: string | undefined): string {
  return `${sessionCookieName(host)}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${isLoopbackHost(host) ? '' : '; Secure'}`;
}

export function clearedSessionCookie(host: string | undefined): string {
  return sessionCookie('', 0, host).replace('Max-Age=0', 'Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT');
}

import { createHash, randomBytes } from 'node:crypto';
import { isoTime, parseIsoTime } from '../clock';

/**
 * API bearer tokens. A token is 32 random bytes (256 bits), so a plain SHA-256
 * is the right stored form: nothing can be guessed from it, and a slow
 * password hash would only add latency to every request (docs/decisions.md).
 */

export const SCOPES = [
  'downloads:read',
  'downloads:write',
  'sync:read',
  'sync:admin',
  'scan:read',
  'health:read',
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

const TOKEN_PREFIX = 'tss_';

/** A fresh token: `tss_` + 43 base64url characters. */
export function newToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** The stored form of a token: SHA-256, hex. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** One configured token: who it is, what it may do, until when. Only the hash is kept. */
export interface TokenGrant {
  name: string;
  sha256: string;
  scopes: Scope[];
  /** Epoch ms after which the token is refused; none = no expiry. */
  expiresAt?: number;
}

/** The JSON form of AUTH_TOKENS: `[{"name","sha256","scopes":[...],"expires_at"?}]`. */
export interface TokenGrantJson {
  name: string;
  sha256: string;
  scopes: string[];
  expires_at?: string;
}

export function grantJson(name: string, token: string, scopes: readonly Scope[], expiresAt?: number): TokenGrantJson {
  return {
    name,
    sha256: tokenHash(token),
    scopes: [...scopes],
    ...(expiresAt !== undefined ? { expires_at: isoTime(expiresAt) } : {}),
  };
}

const NAME = /^[A-Za-z0-9._@-]{1,64}$/;
const SHA256 = /^[0-9a-f]{64}$/;

/** Parses AUTH_TOKENS, returning every problem found (the config loader reports them together). */
export function parseTokenGrants(text: string): { grants: TokenGrant[]; problems: string[] } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // not JSON: refused below with the same message as JSON that is not a list
  }
  if (!Array.isArray(raw))
    return { grants: [], problems: ['must be a JSON array of {name, sha256, scopes, expires_at?}'] };
  const grants: TokenGrant[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  raw.forEach((entry: Partial<TokenGrantJson> | null, i) => {
    const at = `entry ${i}`;
    if (!entry || typeof entry !== 'object') return problems.push(`${at} must be an object`);
    const unknown = Object.keys(entry).filter((k) => !['name', 'sha256', 'scopes', 'expires_at'].includes(k));
    if (unknown.length > 0) problems.push(`${at} has unknown field(s) ${unknown.join(', ')}`);
    if (typeof entry.name !== 'string' || !NAME.test(entry.name))
      problems.push(`${at} needs a name of 1-64 [A-Za-z0-9._@-]`);
    if (typeof entry.sha256 !== 'string' || !SHA256.test(entry.sha256)) {
      problems.push(`${at} needs sha256: the token's SHA-256 as 64 lowercase hex digits (never the token itself)`);
    } else if (seen.has(entry.sha256)) problems.push(`${at} repeats the hash of another entry`);
    if (!Array.isArray(entry.scopes) || entry.scopes.length === 0 || !entry.scopes.every(isScope)) {
      problems.push(`${at} needs scopes: a non-empty list of ${SCOPES.join(', ')}`);
    }
    let expiresAt: number | undefined;
    if (entry.expires_at !== undefined) {
      // The one timestamp form: a local time would be read in the container's zone, an offset is one more form.
      expiresAt = parseIsoTime(entry.expires_at);
      if (expiresAt === undefined)
        problems.push(`${at} has an expires_at that is not an ISO-8601 UTC time like 2027-01-31T00:00:00Z`);
    }
    if (typeof entry.sha256 === 'string') seen.add(entry.sha256);
    grants.push({
      name: String(entry.name),
      sha256: String(entry.sha256),
      scopes: (entry.scopes ?? []) as Scope[],
      expiresAt,
    });
  });
  return { grants: problems.length > 0 ? [] : grants, problems };
}

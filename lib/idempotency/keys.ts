import { createHash } from 'node:crypto';

/**
 * Key design of idempotency records (the ONLY place that writes their prefix).
 * They live in the table of the domain that opts in (POST /downloads: the
 * downloads table, whose TTL attribute `expires_at` removes them):
 *
 * item         PK                       SK
 * record       IDEM#<sha256 of scope>   IDEM
 *
 * The scope is route + caller + the client's key, hashed: a client's key never
 * becomes our key text, and two callers' equal keys never meet.
 */

export const IDEMPOTENCY_SK = 'IDEM';

export function recordKey(route: string, principal: string, clientKey: string) {
  const scope = createHash('sha256').update(`${route}\0${principal}\0${clientKey}`).digest('hex');
  return { PK: `IDEM#${scope}`, SK: IDEMPOTENCY_SK };
}

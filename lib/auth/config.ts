import { Env, EnvReader } from '../config/env';
import { ConfigError } from '../config/errors';
import { Keyring, parseKeyring } from '../secrets/sealer';
import { parseTokenGrants, TokenGrant } from './tokens';

/** The API's credentials: token grants (AUTH_TOKENS) and the session keyring (SESSION_KEYS). */

/** The API authorizer's settings (authorizer function only). */
export interface AuthConfig {
  grants: TokenGrant[];
}

/** AUTH_TOKENS: the JSON list of token grants, hashes only (lib/auth/tokens). */
export function loadAuthConfig(env: Env = process.env): AuthConfig {
  const r = new EnvReader(env);
  const text = r.string('AUTH_TOKENS', { hint: 'a JSON list of token grants' });
  r.done();
  const { grants, problems } = parseTokenGrants(text);
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `AUTH_TOKENS ${p}`));
  return { grants };
}

/** SESSION_KEYS: the keyring signing browser session cookies (the authorizer and the sign-in function only). */
export function loadSessionKeyring(env: Env = process.env): Keyring {
  const r = new EnvReader(env);
  const text = r.string('SESSION_KEYS', { hint: '<id>:<base64 of 32 bytes>, newest first', secret: true });
  r.done();
  const { keyring, problems } = parseKeyring(text);
  if (!keyring) throw new ConfigError(problems.map((p) => `SESSION_KEYS ${p}`));
  return keyring;
}

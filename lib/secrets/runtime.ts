import { environmentChanged } from '../config/generation';
import type { Env } from '../config/env';
import { SecretReadError } from './errors';

/**
 * Secrets read at run time, never from configuration (docs/security.md).
 *
 * On AWS a function's environment names, for each secret variable it uses,
 * where the value lives: `<VAR>_SECRET_ID=<secret id>` for a whole secret, or
 * `<secret id>#<json key>` for one field of a JSON secret (the template's
 * plugin writes them from each function's `secrets:` list). Before every
 * invocation `refreshSecrets` reads them through Powertools Parameters, whose
 * cache keeps a value at most `SECRETS_CACHE_SECONDS` (default 60, at most
 * 300), and writes the values into the process environment, where every
 * configuration loader reads them as before. When a value changed (a revoked
 * API token, a rotated key), the environment's generation moves and whatever
 * was built from the old value is built again (lib/config/generation.ts): a
 * revocation takes effect within the cache time, with no deploy.
 *
 * Locally nothing names a secret: the values are the environment's own, and
 * this reads nothing.
 */

export const SECRET_SUFFIX = '_SECRET_ID';
const DEFAULT_CACHE_S = 60;
const MAX_CACHE_S = 300;

/** What reads one secret's text; Powertools' SecretsProvider on AWS, a fake in unit tests. */
export interface SecretSource {
  get(secretId: string, maxAgeS: number): Promise<string | undefined>;
}

export interface SecretRef {
  variable: string;
  secretId: string;
  jsonKey?: string;
}

/** The secret references in an environment, checked: a malformed one is a configuration error, reported by name. */
export function secretRefs(env: Env): SecretRef[] {
  const refs: SecretRef[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!name.endsWith(SECRET_SUFFIX) || !value) continue;
    const variable = name.slice(0, -SECRET_SUFFIX.length);
    const [secretId, jsonKey, ...rest] = value.split('#');
    if (!/^[A-Z][A-Z0-9_]*$/.test(variable) || !/^[A-Za-z0-9/_+=.@-]{1,512}$/.test(secretId) || rest.length > 0)
      throw new SecretReadError(value, `${name} must be <secret id>[#<json key>]`);
    refs.push(jsonKey === undefined ? { variable, secretId } : { variable, secretId, jsonKey });
  }
  return refs;
}

export function cacheSeconds(env: Env): number {
  const text = env.SECRETS_CACHE_SECONDS?.trim();
  if (!text) return DEFAULT_CACHE_S;
  const value = Number(text);
  // Never longer than five minutes: the promise a revocation is held to (docs/security.md).
  if (!/^\d{1,3}$/.test(text) || value > MAX_CACHE_S)
    throw new SecretReadError('SECRETS_CACHE_SECONDS', `must be 0-${MAX_CACHE_S} seconds, got ${JSON.stringify(text)}`);
  return value;
}

/** One field of a secret's text: the whole text, or a JSON object's string field (absent or empty = unset). */
function valueOf(ref: SecretRef, text: string | undefined): string | undefined {
  if (text === undefined || ref.jsonKey === undefined) return text || undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new SecretReadError(ref.secretId, 'is not a JSON object');
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new SecretReadError(ref.secretId, 'is not a JSON object');
  if (!Object.prototype.hasOwnProperty.call(doc, ref.jsonKey)) return undefined;
  const field = (doc as Record<string, unknown>)[ref.jsonKey];
  if (typeof field !== 'string') throw new SecretReadError(ref.secretId, `field ${ref.jsonKey} is not a string`);
  return field || undefined;
}

/**
 * Reads every referenced secret (each secret once, however many variables it fills) and writes the
 * values into `env`; an unset value removes the variable. Returns whether anything changed.
 */
export async function applySecrets(
  env: Env,
  source: SecretSource,
  refs: SecretRef[],
  maxAgeS: number,
): Promise<boolean> {
  const texts = new Map<string, Promise<string | undefined>>();
  const read = (id: string) => {
    if (!texts.has(id))
      texts.set(
        id,
        source.get(id, maxAgeS).catch((err: unknown) => {
          throw new SecretReadError(id, (err as Error)?.message ?? String(err));
        }),
      );
    return texts.get(id)!;
  };
  const values = await Promise.all(
    refs.map(async (ref) => [ref.variable, valueOf(ref, await read(ref.secretId))] as const),
  );
  let changed = false;
  for (const [variable, value] of values) {
    if (env[variable] === value) continue;
    changed = true;
    if (value === undefined) delete env[variable];
    else env[variable] = value;
  }
  return changed;
}

let powertools: SecretSource | undefined;

/** Powertools' provider, loaded on first use: a function that names no secret never loads the Secrets Manager client. */
async function powertoolsSource(): Promise<SecretSource> {
  if (!powertools) {
    const [{ SecretsProvider }, { SecretsManagerClient }] = await Promise.all([
      import('@aws-lambda-powertools/parameters/secrets'),
      import('@aws-sdk/client-secrets-manager'),
    ]);
    // Our client, on the SDK release every other client uses (docs/architecture.md); it honours AWS_ENDPOINT_URL.
    const provider = new SecretsProvider({ awsSdkV3Client: new SecretsManagerClient({}) });
    powertools = {
      get: async (secretId, maxAgeS) => {
        const value = await provider.get(secretId, { maxAge: maxAgeS });
        return value === undefined || typeof value === 'string' ? value : Buffer.from(value).toString('utf8');
      },
    };
  }
  return powertools;
}

let inFlight: Promise<void> | undefined;

/** Brings the process environment up to date with the function's secrets; concurrent calls share one read. */
export function refreshSecrets(env: Env = process.env, source?: SecretSource): Promise<void> {
  const refs = secretRefs(env);
  if (refs.length === 0) return Promise.resolve();
  inFlight ??= (async () => {
    try {
      if (await applySecrets(env, source ?? (await powertoolsSource()), refs, cacheSeconds(env))) environmentChanged();
    } finally {
      inFlight = undefined;
    }
  })();
  return inFlight;
}

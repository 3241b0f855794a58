import { currentInvocation } from './context';

/**
 * The never-log-a-secret guarantee, enforced where a line is written rather
 * than trusted to every call site: every string of a line (messages, stacks,
 * causes, fields) has each known secret value replaced by `[redacted]`, and a
 * field whose NAME says it holds a secret is dropped to `[redacted]` whatever
 * it holds.
 *
 * The known values: the secret variables of the environment (below, and any
 * `<VAR>` named by a `<VAR>_SECRET` reference: lib/secrets/runtime.ts), each
 * whole and each part of a keyring or a JSON list; and what the running
 * invocation registered with `redactValue` (the bearer token or cookie the
 * authorizer read, a brokerage token the sync opened). Their URL-encoded form
 * too: a login form or a query string carries them that way.
 */

/** Variables that hold a secret wherever they are set (the secret catalog of docs/security.md). */
export const SECRET_VARIABLES = [
  'AUTH_TOKENS',
  'SESSION_KEYS',
  'TELEGRAM_BOT_TOKEN',
  'TELEGRAM_WEBHOOK_SECRET',
  'TORRENT_CLIENT_PASSWORD',
  'TORRENT_CLIENT_API_KEY',
  'SCAN_SMB_PASSWORD',
  'NATS_PASSWORD',
  'NATS_NKEY_SEED',
  'NATS_JWT',
  'SYNC_TOKEN_KEYS',
  'TBANK_TOKEN',
] as const;
/** Keyrings (`id:key,id:key`, lib/secrets/sealer.ts): each key alone is as secret as the whole. */
const KEYRINGS = new Set(['SESSION_KEYS', 'SYNC_TOKEN_KEYS']);

/** Shorter values are not redacted (they would blank common words); every secret we make is far longer. */
export const MIN_SECRET_LENGTH = 6;
export const REDACTED = '[redacted]';
/** Fields whose name says secret: their value never reaches a line. */
const SECRET_FIELD =
  /^(password|passwd|secret|token|api_?key|authorization|cookie|set-cookie)$|_(password|secret|token)$/i;
/** Values registered outside any invocation (a CLI): kept, at most this many. */
const MAX_PROCESS_SECRETS = 64;
const processSecrets = new Set<string>();

/**
 * A value no line may print from now on: within the running invocation, or,
 * outside one (a CLI), for the life of the process.
 */
export function redactValue(value: string | undefined): void {
  if (!value || value.length < MIN_SECRET_LENGTH) return;
  const invocation = currentInvocation();
  if (invocation) {
    invocation.secrets.add(value);
    return;
  }
  if (processSecrets.size >= MAX_PROCESS_SECRETS) processSecrets.delete(processSecrets.values().next().value!);
  processSecrets.add(value);
}

export function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name);
}

let cached: { signature: string; values: string[] } | undefined;

/** The environment's secret values and their parts, longest first (a part never un-redacts its whole). */
function environmentSecrets(env: NodeJS.ProcessEnv): string[] {
  const names = new Set<string>(SECRET_VARIABLES);
  for (const name of Object.keys(env)) if (name.endsWith('_SECRET') && name.length > 7) names.add(name.slice(0, -7));
  const raw = [...names]
    .map((name) => [name, env[name] ?? ''] as const)
    .filter(([, value]) => value.length >= MIN_SECRET_LENGTH);
  const signature = raw.map(([, value]) => value).join('\u0000');
  if (cached?.signature === signature) return cached.values;
  const values = new Set<string>();
  for (const [name, value] of raw) {
    values.add(value);
    if (!KEYRINGS.has(name)) continue;
    for (const entry of value.split(',')) {
      const key = entry.slice(entry.indexOf(':') + 1).trim();
      if (key.length >= MIN_SECRET_LENGTH) values.add(key);
    }
  }
  cached = { signature, values: withEncodings(values) };
  return cached.values;
}

function withEncodings(values: Iterable<string>): string[] {
  const all = new Set<string>();
  for (const value of values) {
    all.add(value);
    const encoded = encodeURIComponent(value);
    if (encoded !== value) all.add(encoded);
  }
  return [...all].sort((a, b) => b.length - a.length);
}

/** Every secret value a line written now must not contain. */
export function knownSecrets(env: NodeJS.ProcessEnv = process.env): string[] {
  const fromEnv = environmentSecrets(env);
  const registered = currentInvocation()?.secrets;
  if (!registered?.size && processSecrets.size === 0) return fromEnv;
  return withEncodings([...fromEnv, ...processSecrets, ...(registered ?? [])]);
}

/** `text` with every occurrence of every secret replaced. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}

/** A line as JSON, every string scrubbed and every secret-named field redacted. */
export function safeStringify(record: object, env: NodeJS.ProcessEnv = process.env): string {
  const secrets = knownSecrets(env);
  return JSON.stringify(record, (key, value: unknown) => {
    if (key && isSecretField(key) && value !== undefined && value !== null) return REDACTED;
    return typeof value === 'string' ? scrub(value, secrets) : value;
  });
}

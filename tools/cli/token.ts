import { grantJson, isScope, newToken, Scope, SCOPES } from '../../lib/auth/tokens';
import { newKeyringEntry } from '../../lib/secrets/sealer';

/**
 * `npm run token -- …`: the secrets an operator configures (docs/security.md).
 *   new --name ops --scopes downloads:read,sync:read [--days 90]
 *       a new API token (shown once) and its AUTH_TOKENS entry (hash only)
 *   key <id>
 *       a new SYNC_TOKEN_KEYS entry; put it FIRST to rotate
 */

const USAGE = `usage:
  npm run token -- new --name <name> --scopes <${SCOPES.join(',')}> [--days <n>]
  npm run token -- key <id>`;

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

function main(args: string[]): string {
  const [command] = args;
  if (command === 'new') {
    const name = option(args, 'name');
    const scopes = (option(args, 'scopes') ?? '').split(',').filter(Boolean);
    const days = option(args, 'days');
    if (!name || scopes.length === 0 || !scopes.every(isScope) || (days !== undefined && !/^[1-9]\d{0,4}$/.test(days)))
      throw new Error(USAGE);
    const token = newToken();
    const expires = days ? Date.now() + Number(days) * 86_400_000 : undefined;
    return [
      `token (give it to the caller; it is not stored anywhere):`,
      `  ${token}`,
      `AUTH_TOKENS entry (add it to the JSON list):`,
      `  ${JSON.stringify(grantJson(name, token, scopes as Scope[], expires))}`,
    ].join('\n');
  }
  if (command === 'key' && args[1] && /^[A-Za-z0-9_-]{1,32}$/.test(args[1])) {
    return [
      `SYNC_TOKEN_KEYS entry (put it first; keep the old keys after it until every token is re-sealed):`,
      `  ${newKeyringEntry(args[1])}`,
    ].join('\n');
  }
  throw new Error(USAGE);
}

try {
  process.stdout.write(main(process.argv.slice(2)) + '\n');
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(2);
}

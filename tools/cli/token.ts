import { grantJson, isScope, newToken, Scope, SCOPES } from '../../lib/auth/tokens';
import { newKeyringEntry } from '../../lib/secrets/sealer';
import { CliArgs, cliSpec, runCli, UsageError } from './run';

/**
 * `npm run token -- …`: the secrets an operator configures (docs/security.md).
 * `npm run token -- --help` for the commands.
 */

export const TOKEN_CLI = cliSpec({
  usage: `usage: npm run token -- new --name <name> --scopes <scope,…> [--days <n>]
       npm run token -- key <id>

The secrets an operator configures (docs/security.md); nothing is stored anywhere.

  new    a new API token (shown once) and its AUTH_TOKENS entry (its hash only)
           --name <name>        who holds it (shown in logs)
           --scopes <list>      comma-separated, of ${SCOPES.join(', ')}
           --days <n>           it expires after n days (default: never)
  key    a new SYNC_TOKEN_KEYS entry named <id> (A-Za-z0-9_-, up to 32); put it FIRST to rotate
  --help this text

Exit 0 printed, 2 bad usage.`,
  options: { name: { type: 'string' }, scopes: { type: 'string' }, days: { type: 'string' } },
  positionals: { min: 1, max: 2 },
});

async function main({ values, positionals: [command, id] }: CliArgs<typeof TOKEN_CLI.options>): Promise<number> {
  if (command === 'new') {
    if (id !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(id)}`);
    const { name, days } = values;
    const scopes = (values.scopes ?? '').split(',').filter(Boolean);
    if (!name) throw new UsageError('new needs --name');
    if (scopes.length === 0) throw new UsageError('new needs --scopes');
    const unknown = scopes.filter((s) => !isScope(s));
    if (unknown.length) throw new UsageError(`unknown scope ${JSON.stringify(unknown[0])}`);
    if (days !== undefined && !/^[1-9]\d{0,4}$/.test(days)) throw new UsageError('--days must be 1..99999');
    const token = newToken();
    const expires = days ? Date.now() + Number(days) * 86_400_000 : undefined;
    say([
      `token (give it to the caller; it is not stored anywhere):`,
      `  ${token}`,
      `AUTH_TOKENS entry (add it to the JSON list):`,
      `  ${JSON.stringify(grantJson(name, token, scopes as Scope[], expires))}`,
    ]);
    return 0;
  }
  if (command === 'key') {
    if (values.name ?? values.scopes ?? values.days) throw new UsageError('key takes only an id');
    if (!id || !/^[A-Za-z0-9_-]{1,32}$/.test(id)) throw new UsageError('key needs an id: A-Za-z0-9_-, up to 32');
    say([
      `SYNC_TOKEN_KEYS entry (put it first; keep the old keys after it until every token is re-sealed):`,
      `  ${newKeyringEntry(id)}`,
    ]);
    return 0;
  }
  throw new UsageError(`unknown command ${JSON.stringify(command)}: new or key`);
}

const say = (lines: string[]) => process.stdout.write(`${lines.join('\n')}\n`);

if (require.main === module) runCli(TOKEN_CLI, main);

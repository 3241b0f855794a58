import { createAwsClients, TOOL_DYNAMODB_LIMITS } from '../../lib/aws/clients';
import { EnvReader } from '../../lib/config/env';
import { ConfigError } from '../../lib/config/errors';
import { createLogger } from '../../lib/log';
import { SecretKeyRefusedError, SecretsUnavailableError } from '../../lib/secrets/errors';
import { loadTokenSealing } from '../../lib/sync/config';
import { DynamoSyncStore } from '../../lib/sync/dynamodb-store';
import { ResealInputError } from '../../lib/sync/errors';
import { parseResealInput, type ResealCounts, resealTokens } from '../../lib/sync/reseal';
import { newKmsSealer, sealerOf } from '../../lib/sync/wiring';
import { CliArgs, cliSpec, runCli } from './run';
import { loadStackEnv } from './stack-env';

const HELP = `usage: npm run sync:reseal -- [--cursor <user id>] [--limit <n>] [--all]

Re-seals every stored brokerage token under the current sealer: KMS when
SYNC_TOKEN_KMS_KEY is set (legacy "v1." values opened with the SYNC_TOKEN_KEYS
keyring), else the keyring's newest key (a keyring rotation). A value already
current is left alone; a token replaced meanwhile is never overwritten. Safe to
stop (Ctrl-C) and run again: --cursor resumes after the last page shown.

  --cursor <id>   resume after this user id (the cursor a run printed)
  --limit <n>     stop after n connections, print the cursor to resume from
  --all           re-seal current values too (after replacing the KMS key)
  --help          this text

The target is the environment's: TABLE_SYNC, AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB
(read from .stack/env when \`npm start\` runs), SYNC_TOKEN_KMS_KEY and/or
SYNC_TOKEN_KEYS, the KMS endpoint the SDK's own (AWS_ENDPOINT_URL_KMS).
Exit 0 done (or stopped at --limit), 1 some values would not open (listed by
user id), 2 bad usage or settings, 3 KMS refused or did not answer.
(docs/security.md, "Migrating sealed tokens to KMS")`;

const RESEAL_CLI = cliSpec({
  usage: HELP,
  options: { cursor: { type: 'string' }, limit: { type: 'string' }, all: { type: 'boolean' } },
});

function resealOptions({ values }: CliArgs<typeof RESEAL_CLI.options>) {
  const { cursor, limit, all } = values;
  // parseResealInput says what is wrong with a limit that is no number.
  return parseResealInput({ cursor, limit: limit && /^\d{1,15}$/.test(limit) ? Number(limit) : limit, all });
}

const countsText = (c: ResealCounts) =>
  `scanned ${c.scanned}, resealed ${c.resealed}, already current ${c.current}, changed meanwhile ${c.changed}, unreadable ${c.unreadable}`;

async function main(cli: CliArgs<typeof RESEAL_CLI.options>): Promise<number> {
  const args = resealOptions(cli);
  loadStackEnv();
  const r = new EnvReader(process.env);
  const table = r.string('TABLE_SYNC', { pattern: /^[A-Za-z0-9._-]{3,255}$/, hint: 'the sync table' });
  const region = r.string('AWS_REGION', { default: 'us-east-1', pattern: /^[a-z]{2}(-[a-z]+)+-\d$/ });
  const dynamodb = r.url('AWS_ENDPOINT_URL_DYNAMODB', ['http', 'https'], { optional: true });
  r.done();
  const sealing = loadTokenSealing(process.env);
  const sealer = sealerOf(sealing, (keyIds) => newKmsSealer(keyIds, region, TOOL_DYNAMODB_LIMITS));
  const aws = createAwsClients({ region, endpoints: { dynamodb } }, TOOL_DYNAMODB_LIMITS);
  const out = process.stderr;
  const began = Date.now();
  let shown = 0;
  const line = (text: string) => (out.isTTY ? out.write(`\r${text}\x1b[K`) : out.write(`${text}\n`));
  try {
    const target = sealing.kmsKeys.length ? `KMS key ${sealing.kmsKeys[0]}` : 'the keyring';
    out.write(`${table}: re-sealing under ${target}${args.cursor ? `, after ${args.cursor}` : ''}\n`);
    // Unreadable values are listed one a line; the rest is the progress line.
    const log = createLogger({}, { write: (json) => out.write(`${out.isTTY ? '\r\x1b[K' : ''}${json}\n`) });
    const result = await resealTokens(
      { store: new DynamoSyncStore({ documents: aws.documents, table }), sealer, log },
      {
        ...args,
        onPage: ({ counts, cursor }) => {
          const now = Date.now();
          if (!out.isTTY && now - shown < 5000) return;
          shown = now;
          const rate = (counts.scanned * 1000) / Math.max(1, now - began);
          line(`${countsText(counts)}  ${rate.toFixed(0)}/s  cursor ${cursor ?? '-'}`);
        },
      },
    );
    if (out.isTTY) out.write('\n');
    const next = result.done ? 'done' : `stopped: resume with --cursor ${result.cursor ?? '(none: from the start)'}`;
    process.stdout.write(`${table}: ${countsText(result.counts)}; ${next}\n`);
    return result.counts.unreadable > 0 ? 1 : 0;
  } catch (err) {
    if (!(err instanceof SecretKeyRefusedError || err instanceof SecretsUnavailableError)) throw err;
    process.stderr.write(`\n${err.message}\nresume with the last cursor shown once KMS answers\n`);
    return 3;
  } finally {
    aws.dynamodb.destroy();
  }
}

if (require.main === module) runCli(RESEAL_CLI, main, { expected: [ConfigError, ResealInputError] });

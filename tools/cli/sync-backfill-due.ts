import { createAwsClients, TOOL_DYNAMODB_LIMITS } from '../../lib/aws/clients';
import { EnvReader } from '../../lib/config/env';
import { ConfigError } from '../../lib/config/errors';
import { backfillDueIndex } from '../../lib/sync/connections';
import { DynamoSyncStore } from '../../lib/sync/dynamodb-store';
import { cliSpec, runCli } from './run';
import { loadStackEnv } from './stack-env';

export const BACKFILL_CLI = cliSpec({
  usage: `usage: npx tsx tools/cli/sync-backfill-due.ts

Once, after deploying the due index over a sync table written before it
(docs/deploy.md): gives every connection its due entry, due now. Idempotent,
safe to stop and run again.

  --help  this text

The target is the environment's: TABLE_SYNC, AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB
(read from .stack/env when \`npm start\` runs). Exit 0 done, 2 bad usage or settings.`,
  options: {},
});

/**
 * `npx tsx tools/cli/sync-backfill-due.ts`
 *
 * Once, after deploying the due index over a sync table written before it
 * (docs/deploy.md): gives every connection its entry, due now (a user without
 * a head through its connection item, a head without `due_at` on the head).
 * Pages every connection; idempotent, safe to re-run or kill. The target is
 * the environment's: TABLE_SYNC, AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB
 * (read from .stack/env when `npm start` runs). Exit 0 done, 2 bad settings.
 */
async function main(): Promise<number> {
  loadStackEnv();
  const r = new EnvReader(process.env);
  const table = r.string('TABLE_SYNC', { pattern: /^[A-Za-z0-9._-]{3,255}$/, hint: 'the sync table' });
  const region = r.string('AWS_REGION', { default: 'us-east-1', pattern: /^[a-z]{2}(-[a-z]+)+-\d$/ });
  const dynamodb = r.url('AWS_ENDPOINT_URL_DYNAMODB', ['http', 'https'], { optional: true });
  r.done();
  const aws = createAwsClients({ region, endpoints: { dynamodb } }, TOOL_DYNAMODB_LIMITS);
  try {
    const store = new DynamoSyncStore({ documents: aws.documents, table });
    const result = await backfillDueIndex({ connections: store, hourly: store }, Date.now());
    process.stdout.write(`${table}: ${result.connections} connections, ${result.backfilled} given a due entry\n`);
    return 0;
  } finally {
    aws.dynamodb.destroy();
    aws.s3.destroy();
  }
}

if (require.main === module) runCli(BACKFILL_CLI, main, { expected: [ConfigError] });

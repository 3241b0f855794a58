import { dynamodbWrites, reportDynamodbWrites } from './dynamodb-writes';
import { downloadsIngest, reportDownloadsIngest } from './downloads-ingest';
import { startBenchStack } from './support';

/** `npm run bench`: every benchmark in one run against one fresh stack. */
async function main() {
  const bench = await startBenchStack({ say: (line) => process.stdout.write(`[bench] ${line}\n`) });
  try {
    reportDynamodbWrites(await dynamodbWrites(bench));
    reportDownloadsIngest(await downloadsIngest(bench));
  } finally {
    await bench.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

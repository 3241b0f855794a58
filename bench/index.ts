import { dynamodbWrites, reportDynamodbWrites } from './dynamodb-writes';
import { downloadsIngest, reportDownloadsIngest } from './downloads-ingest';
import { BenchStack, startBenchStack } from './support';
import { reportSyncTick, syncTick } from './sync-tick';
import { reportScanGateway, scanGateway } from './scan-gateway';

/** `npm run bench [-- name...]`: the benchmarks (all by default) in one run against one fresh stack. */
const BENCHES: Record<string, (bench: BenchStack) => Promise<void>> = {
  writes: async (b) => reportDynamodbWrites(await dynamodbWrites(b)),
  ingest: async (b) => reportDownloadsIngest(await downloadsIngest(b)),
  sync: async (b) => reportSyncTick(await syncTick(b)),
  scan: async (b) => reportScanGateway(await scanGateway(b)),
};

async function main() {
  const chosen = process.argv.slice(2);
  const unknown = chosen.filter((name) => !(name in BENCHES));
  if (unknown.length) throw new Error(`unknown bench ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}`);
  const bench = await startBenchStack({ say: (line) => process.stdout.write(`[bench] ${line}\n`) });
  try {
    for (const name of chosen.length ? chosen : Object.keys(BENCHES)) await BENCHES[name](bench);
  } finally {
    await bench.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

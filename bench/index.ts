import { dynamodbWrites, reportDynamodbWrites } from './dynamodb-writes';
import { downloadsIngest, reportDownloadsIngest } from './downloads-ingest';
import { downloadsPoll, realClientPoll, reportDownloadsPoll, reportRealPoll } from './downloads-poll';
import { edgeTokens, httpEdge, reportHttpEdge } from './http-edge';
import { BenchStack, startBenchStack } from './support';
import { freePort } from '../tools/stack/ports';
import { reportSyncTick, syncTick } from './sync-tick';
import { reportSyncEgress, syncEgress } from './sync-egress';
import { reportScanGateway, scanGateway } from './scan-gateway';
import { reportScanEndToEnd, scanEndToEnd } from './scan-e2e';
import { legacyImport, reportLegacyImport } from './legacy-import';
import { reportTbankSync, tbankSync } from './tbank-sync';
import { coldStart, reportColdStart } from './cold-start';
import { consolePages, reportConsolePages } from './console';

/** `npm run bench [-- name...]`: the benchmarks (all by default) in one run against one fresh stack. */
const BENCHES: Record<string, (bench: BenchStack) => Promise<void>> = {
  writes: async (b) => reportDynamodbWrites(await dynamodbWrites(b)),
  ingest: async (b) => reportDownloadsIngest(await downloadsIngest(b)),
  poll: async (b) => {
    reportDownloadsPoll(await downloadsPoll(b));
    reportRealPoll(await realClientPoll(b));
  },
  sync: async (b) => {
    reportSyncTick(await syncTick(b));
    reportSyncEgress(await syncEgress());
  },
  tbank: async (b) => reportTbankSync(await tbankSync(b)),
  // In-process first (where the time goes, phase by phase), then end to end through NATS and serverless offline.
  scan: async (b) => {
    reportScanGateway(await scanGateway(b));
    reportScanEndToEnd(await scanEndToEnd(b));
  },
  edge: async (b) => reportHttpEdge(await httpEdge(b)),
  legacy: async (b) => reportLegacyImport(await legacyImport(b)),
  cold: async (b) => reportColdStart(await coldStart(b)),
  console: async (b) => reportConsolePages(await consolePages(b)),
};
// Benches that need serverless offline (started only when one of them runs).
const NEEDS_OFFLINE = ['edge', 'cold', 'scan'];

async function main() {
  const chosen = process.argv.slice(2);
  const unknown = chosen.filter((name) => !(name in BENCHES));
  if (unknown.length)
    throw new Error(`unknown bench ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}`);
  const names = chosen.length ? chosen : Object.keys(BENCHES);
  const offline = names.some((name) => NEEDS_OFFLINE.includes(name));
  const bench = await startBenchStack({
    say: (line) => process.stdout.write(`[bench] ${line}\n`),
    ...(offline
      ? {
          offline: true,
          emulators: true,
          httpPort: await freePort(),
          lambdaPort: await freePort(),
          authTokens: edgeTokens,
        }
      : {}),
  });
  try {
    for (const name of names) await BENCHES[name](bench);
  } finally {
    await bench.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

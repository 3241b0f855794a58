import { dynamodbWrites, reportDynamodbWrites } from './dynamodb-writes';
import { downloadsIngest, reportDownloadsIngest } from './downloads-ingest';
import { downloadsPoll, realClientPoll, reportDownloadsPoll, reportRealPoll } from './downloads-poll';
import { edgeTokens, httpEdge, reportHttpEdge } from './http-edge';
import { BenchStack, startBenchStack } from './support';
import { freePort } from '../tools/stack/ports';
import { CliArgs, cliSpec, runCli, UsageError } from '../tools/cli/run';
import { reportSyncTick, syncTick } from './sync-tick';
import { reportSyncEgress, syncEgress } from './sync-egress';
import { reportSyncFirst, syncFirstRows } from './sync-first';
import { reportScanGateway, scanGateway } from './scan-gateway';
import { reportScanEndToEnd, scanEndToEnd } from './scan-e2e';
import { reportScanShareVsLocal, scanShareVsLocal } from './scan-share';
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
    reportSyncFirst(await syncFirstRows());
  },
  // Time to first sync alone (also part of `sync`).
  'sync-first': async () => {
    reportSyncFirst(await syncFirstRows());
  },
  tbank: async (b) => reportTbankSync(await tbankSync(b)),
  // In-process first (where the time goes, phase by phase), then end to end through NATS and serverless offline.
  scan: async (b) => {
    reportScanGateway(await scanGateway(b));
    reportScanEndToEnd(await scanEndToEnd(b));
    reportScanShareVsLocal(await scanShareVsLocal(b));
  },
  // The Samba share against the local folder at production settings (also part of `scan`).
  'scan-share': async (b) => reportScanShareVsLocal(await scanShareVsLocal(b)),
  edge: async (b) => reportHttpEdge(await httpEdge(b)),
  legacy: async (b) => reportLegacyImport(await legacyImport(b)),
  cold: async (b) => reportColdStart(await coldStart(b)),
  console: async (b) => reportConsolePages(await consolePages(b)),
};
// Benches that need serverless offline (started only when one of them runs).
const NEEDS_OFFLINE = ['edge', 'cold', 'scan'];

export const BENCH_CLI = cliSpec({
  usage: `usage: npm run bench [-- <name>…]

Starts its own stack and prints throughput ratios measured in the same run
(docs/testing.md). Without names, every bench runs in turn; each prints its
progress as it goes.

  <name>  one of ${Object.keys(BENCHES).join(', ')}
  --help  this text

Exit 0 done, 1 a bench failed, 2 bad usage.`,
  options: {},
  positionals: { min: 0, max: Object.keys(BENCHES).length },
});

async function main({ positionals: chosen }: CliArgs<typeof BENCH_CLI.options>): Promise<number> {
  const unknown = chosen.filter((name) => !Object.hasOwn(BENCHES, name));
  if (unknown.length)
    throw new UsageError(`unknown bench ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}`);
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
  return 0;
}

if (require.main === module) runCli(BENCH_CLI, main, { crash: { code: 1, stack: true } });

import { DynamoDownloadStore } from '../lib/downloads/dynamodb-store';
import { reconcile } from '../lib/downloads/reconcile';
import { silentLogger } from '../lib/log';
import { DEFAULT_CATEGORY, QBittorrentClient } from '../lib/torrents/qbittorrent';
import { QbittorrentEmulator } from '../emulator/qbittorrent/emulator';
import type { BenchStack } from './support';

/**
 * Poll cost in steady state: N torrents in the client, 1% of them changing
 * (progress) between two polls, over sync/maindata (rid) vs full lists
 * (torrents/info). Per poll: wall time, bytes read from the client,
 * torrents reconciled, DynamoDB requests. Steady state = the container's
 * client has read the client before (warm rid / previous list) and the
 * changing torrents are known downloads.
 */
const SIZES = [10, 1000, 10_000];
const CHANGING = 0.01;

export interface PollRow {
  torrents: number;
  mode: 'sync/maindata' | 'full lists';
  ms: number;
  bytes: number;
  reconciled: number;
  dynamodbRequests: number;
}

export async function downloadsPoll(bench: BenchStack): Promise<PollRow[]> {
  let requests = 0;
  bench.aws.documents.middlewareStack.add((next) => async (args) => (requests++, next(args)), {
    step: 'initialize',
    name: 'countRequests',
  });
  const store = new DynamoDownloadStore({ documents: bench.aws.documents, table: bench.config.tables.downloads });
  const rows: PollRow[] = [];
  for (const size of SIZES) {
    for (const mode of ['sync/maindata', 'full lists'] as const) {
      const emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile: '5.2' });
      const url = await emulator.listen();
      try {
        const all = Array.from({ length: size }, () =>
          emulator.addTorrent({ kind: 'v1', category: DEFAULT_CATEGORY, progress: 0 }),
        );
        const changing = all.slice(0, Math.max(1, Math.round(size * CHANGING)));
        const torrents = new QBittorrentClient({
          baseUrl: url,
          auth: { kind: 'password', username: 'admin', password: 'pw' },
          fullResyncMs: 3_600_000,
        });
        if (mode === 'full lists') Object.assign(torrents, { maindata: false });
        const deps = { store, torrents, log: silentLogger };
        await torrents.snapshot(); // the container has polled before
        const tick = (progress: number) => changing.forEach((t) => emulator.update(t.hash, { progress }));
        tick(0.01);
        await reconcile(deps); // the changing ones become known downloads
        tick(0.02);
        const [bytes0, requests0, began] = [emulator.bytesOut, requests, process.hrtime.bigint()];
        const report = await reconcile(deps);
        rows.push({
          torrents: size,
          mode,
          ms: Number(process.hrtime.bigint() - began) / 1e6,
          bytes: emulator.bytesOut - bytes0,
          reconciled: report.updated + report.unchanged + report.adopted + report.resurrected,
          dynamodbRequests: requests - requests0,
        });
      } finally {
        await emulator.close();
      }
    }
  }
  return rows;
}

export function reportDownloadsPoll(rows: PollRow[]): void {
  process.stdout.write(
    `\nDownloads poll, steady state, ${CHANGING * 100}% of the torrents changing between polls (qBittorrent 5.2 emulator, DynamoDB Local)\n`,
  );
  for (const r of rows) {
    const base = rows.find((b) => b.torrents === SIZES[0] && b.mode === r.mode)!;
    process.stdout.write(
      `  ${String(r.torrents).padStart(6)} torrents  ${r.mode.padEnd(14)} ${r.ms.toFixed(0).padStart(6)} ms  ${String(r.bytes).padStart(9)} B from client  ` +
        `${String(r.reconciled).padStart(4)} reconciled  ${String(r.dynamodbRequests).padStart(4)} DynamoDB requests   x${(r.ms / base.ms).toFixed(1)} the time at ${SIZES[0]}\n`,
    );
  }
}

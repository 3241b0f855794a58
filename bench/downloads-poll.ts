import { DynamoDownloadStore } from '../lib/downloads/dynamodb-store';
import { reconcile } from '../lib/downloads/reconcile';
import { silentLogger } from '../lib/log';
import { DEFAULT_CATEGORY, QBittorrentClient } from '../lib/torrents/qbittorrent';
import { QbittorrentEmulator } from '../emulator/qbittorrent/emulator';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { QbtSession, startQbittorrent } from '../tools/stack/qbittorrent';
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

export interface RealPollRow {
  client: 'qbittorrent-nox 4.5.2' | 'emulator 5.2';
  torrents: number;
  ms: number;
  calls: number;
}

/**
 * The same steady poll against a REAL qBittorrent (a qbittorrent-nox of its own, closed swarm) and the emulator:
 * REAL_SIZE torrents in our category, added stopped by magnet (no transfer), all adopted by a first poll; then
 * the median of 5 polls in which nothing changed: wall time and calls to the client per poll.
 */
const REAL_SIZE = 1000;

export async function realClientPoll(bench: BenchStack): Promise<RealPollRow[]> {
  const store = new DynamoDownloadStore({ documents: bench.aws.documents, table: bench.config.tables.downloads });
  const magnets = Array.from({ length: REAL_SIZE }, () => `magnet:?xt=urn:btih:${randomBytes(20).toString('hex')}`);
  const rows: RealPollRow[] = [];
  const measure = async (name: RealPollRow['client'], baseUrl: string, password: string) => {
    let calls = 0;
    const counting: typeof fetch = (input, init) => (calls++, fetch(input, init));
    const torrents = new QBittorrentClient({
      baseUrl,
      auth: { kind: 'password', username: 'admin', password },
      fetch: counting,
      timeoutMs: 60_000,
      fullResyncMs: 3_600_000,
    });
    await reconcile({ store, torrents, log: silentLogger }); // adopts them all, warms the session and the rid
    const times: number[] = [];
    const perPoll: number[] = [];
    for (let i = 0; i < 5; i++) {
      const [calls0, began] = [calls, process.hrtime.bigint()];
      await reconcile({ store, torrents, log: silentLogger });
      times.push(Number(process.hrtime.bigint() - began) / 1e6);
      perPoll.push(calls - calls0);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    rows.push({ client: name, torrents: REAL_SIZE, ms: median(times), calls: median(perPoll) });
  };

  const qbt = await startQbittorrent({
    name: 'bench-qbittorrent',
    profileDir: path.join(bench.stateDir, 'qbittorrent'),
    logDir: bench.stateDir,
  });
  try {
    const session = QbtSession.of(qbt);
    await session.call(
      'POST',
      'torrents/add',
      new URLSearchParams({ urls: magnets.join('\n'), category: DEFAULT_CATEGORY, paused: 'true', stopped: 'true' }),
    );
    for (let until = Date.now() + 120_000; ;) {
      if ((await session.torrents(`?category=${DEFAULT_CATEGORY}`)).length >= REAL_SIZE) break;
      if (Date.now() > until) throw new Error(`qbittorrent-nox did not list ${REAL_SIZE} torrents in 2 min`);
      await new Promise((r) => setTimeout(r, 500));
    }
    await measure('qbittorrent-nox 4.5.2', qbt.url, qbt.password);
  } finally {
    await qbt.stop();
  }
  const emulator = new QbittorrentEmulator({ username: 'admin', password: 'pw', profile: '5.2' });
  const url = await emulator.listen();
  try {
    for (let i = 0; i < REAL_SIZE; i++)
      emulator.addTorrent({ kind: 'v1', category: DEFAULT_CATEGORY, state: 'stoppedDL' });
    await measure('emulator 5.2', url, 'pw');
  } finally {
    await emulator.close();
  }
  return rows;
}

export function reportRealPoll(rows: RealPollRow[]): void {
  process.stdout.write(
    `\nDownloads poll, steady state, ${REAL_SIZE} stopped torrents in the category, nothing changing (median of 5)\n`,
  );
  const emulator = rows.find((r) => r.client === 'emulator 5.2');
  for (const r of rows)
    process.stdout.write(
      `  ${r.client.padEnd(22)} ${r.ms.toFixed(0).padStart(6)} ms  ${String(r.calls).padStart(3)} calls per poll` +
        (emulator ? `   x${(r.ms / emulator.ms).toFixed(1)} the emulator's time\n` : '\n'),
    );
}

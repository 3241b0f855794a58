import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, NatsConnection } from 'nats';
import { createAwsClients, TOOL_DYNAMODB_LIMITS } from '../../lib/aws/clients';
import { loadConfig } from '../../lib/config';
import { natsOptions } from '../../lib/nats/connection';
import { DynamoDbScanJobStore } from '../../lib/scan/dynamodb-store';
import { loadScanConfig } from '../../lib/scan/config';
import { loadTorrentClientConfig } from '../../lib/torrents/config';
import { progressBar } from '../cli/progress';
import { seededRandom } from './args';
import { auditDownloads, Torrent } from './audit/downloads';
import { auditScan, envelopeCopies } from './audit/scan';
import { allItems, logTexts, objectText, streamRecords } from './audit/sources';
import { auditStack } from './audit/stack';
import { auditSync } from './audit/sync';
import { auditTelegram, SentMessage } from './audit/telegram';
import { violation, Violation } from './audit/violations';
import { ChaosTiming, DEFAULT_TIMING, runChaos } from './chaos';
import { faultActions, FaultKind } from './faults';
import { botLoad } from './load/bot';
import { downloadLoad } from './load/downloads';
import { collectEnvelopes, scanLatencies, scanLoad, SentScan } from './load/scan';
import { syncLoad } from './load/sync';
import { FaultWindow, Recorder } from './metrics';
import { buildReport, SoakReport } from './report';
import { SoakStack, startSoakStack } from './stack';

/**
 * One soak: the stack as npm start runs it, the load of the three domains and
 * the chaos schedule for `minutes`, a drain, then the audit from the stores,
 * NATS, the real client and the logs. The result keeps the stack up (the
 * audit test plants a violation and audits again) until stop().
 */

export interface SoakOptions {
  root: string;
  minutes: number;
  seed: number;
  chaos: boolean;
  /** The scan hot folder: a Samba share of the stack's (STACK_HOTFOLDER=smb; default) or the folder itself. */
  hotFolder?: 'smb' | 'local';
  timing?: ChaosTiming;
  kinds?: readonly FaultKind[];
  stoppable?: readonly string[];
  killable?: readonly string[];
  /** The sync hour's length (SYNC_HOUR_MS; default 2 min: a connection is synced several times in a run). */
  hourMs?: number;
  /** The longest the drain waits for the service to settle (default 5 min). */
  drainMs?: number;
  /** The least it waits (default 130 s: two downloads polls after the last create, the client reconciled). */
  drainMinMs?: number;
  say: (line: string) => void;
  progress: { write(text: string): unknown; isTTY?: boolean };
}

export interface SoakRun {
  report: SoakReport;
  stack: SoakStack;
  /** Audits again, now (the audit test plants a violation first). */
  audit(): Promise<Violation[]>;
  stop(): Promise<void>;
}

const FOREIGN_CATEGORY = 'soak-foreign';

export async function runSoak(o: SoakOptions): Promise<SoakRun> {
  const startedAt = Date.now();
  const notes: string[] = [];
  const soak = await startSoakStack(o.root, o.say, { hourMs: o.hourMs ?? 120_000, hotFolder: o.hotFolder ?? 'smb' });
  // The SDK's clients read their credentials from the environment, as the bench's do (bench/support.ts).
  Object.assign(process.env, soak.stack.env);
  const env = process.env;
  const config = loadConfig(env);
  const aws = createAwsClients(config, TOOL_DYNAMODB_LIMITS);
  const scanConfig = loadScanConfig(env);
  const category = loadTorrentClientConfig(env).category;
  const chats = soak.stack.env.TELEGRAM_CHAT_IDS.split(',').map(Number);
  const telegramUrl = soak.stack.env.TELEGRAM_API_ROOT;
  const hourMs = Number(env.SYNC_HOUR_MS);
  notes.push(`the sync hour is ${hourMs / 1000} s (SYNC_HOUR_MS)`);
  let nc: NatsConnection | undefined;
  const cleanup = async () => {
    await nc?.close().catch(() => undefined);
    aws.dynamodb.destroy();
    aws.s3.destroy();
    await soak.stop();
  };
  try {
    nc = await connect(natsOptions(config.nats, 'soak'));
    const recorder = new Recorder();
    const now = Date.now;
    const random = seededRandom(o.seed);
    const seen = collectEnvelopes(nc, scanConfig.resultSubject, now);
    await nc.flush();
    const foreignBefore = await plantForeignTorrent(soak);

    const until = { until: now() + o.minutes * 60_000 };
    // The stack stopped itself (a service died and was not brought back): the load ends, the audit says why.
    soak.onFatal = () => void (until.until = Math.min(until.until, now()));
    const http = { base: soak.httpUrl, token: soak.token, recorder, now };
    const pause = (ms: number) => sleep(ms);
    const windows: FaultWindow[] = [];
    const healthy = () => probe(soak, nc!);
    const progress = showProgress(o, recorder, windows, until.until);
    const [sent, downloads, connections, presses, chaosWindows] = await Promise.all([
      scanLoad(
        {
          nc,
          s3: aws.s3,
          bucket: config.buckets.files,
          requestSubject: env.SCAN_REQUEST_SUBJECT || 'scan.requests',
          resultSubject: scanConfig.resultSubject,
          fixtures: path.join(o.root, 'fixtures', 'ocr', 'inputs'),
          random: seededRandom(random.int(0, 2 ** 30)),
          recorder,
          now,
          sleep: pause,
          seen,
        },
        until,
      ),
      downloadLoad(
        {
          ...http,
          random: seededRandom(random.int(0, 2 ** 30)),
          magnets: soak.seeded.map((t) => t.magnet),
          sleep: pause,
        },
        until,
      ),
      syncLoad({ ...http, sleep: pause }, until),
      botLoad(
        {
          telegramUrl,
          chats,
          user: Number(soak.stack.env.TELEGRAM_ALLOWED_USER_IDS.split(',')[0]),
          random: seededRandom(random.int(0, 2 ** 30)),
          recorder,
          now,
          sleep: pause,
        },
        until,
      ),
      o.chaos
        ? runChaos(
            {
              actions: faultActions({
                services: soak.stack.services,
                telegramUrl,
                chats,
                brokerageUrl: soak.stack.env.TBANK_API_URL,
                kinds: o.kinds,
                stoppable: o.stoppable,
                killable: o.killable,
                sleep: pause,
              }),
              random: seededRandom(random.int(0, 2 ** 30)),
              now,
              sleep: pause,
              healthy,
              say: (line) => o.say(line),
            },
            until,
            o.timing ?? DEFAULT_TIMING,
            windows,
          )
        : Promise.resolve(windows),
    ]);
    progress.stop();
    const loadEnd = now();
    o.say(`load over: ${recorder.total()} operations, ${chaosWindows.length} faults; draining`);
    await drain(
      { minMs: o.drainMinMs ?? 130_000, maxMs: o.drainMs ?? 300_000 },
      sent,
      seen,
      soak,
      aws.documents,
      env.TABLE_SYNC!,
      o.say,
    );
    scanLatencies(sent, seen, recorder);

    const audit = async (): Promise<Violation[]> => {
      const logs = logTexts(path.join(soak.stateDir, 'logs'));
      const jobs = new DynamoDbScanJobStore(aws.documents, config.tables.scan);
      // A source that cannot be read is reported as such: the domain's invariants were not checked.
      const checked = async (domain: string, run: () => Promise<Violation[]> | Violation[]) => {
        try {
          return await run();
        } catch (err) {
          return [
            violation('audit: every source read', `${domain}: ${err instanceof Error ? err.message : String(err)}`),
          ];
        }
      };
      return [
        ...(await checked('scan', () =>
          auditScan({
            sent,
            seen,
            job: (id) => jobs.get(id),
            object: (key) => objectText(aws.s3, config.buckets.files, key),
          }),
        )),
        ...(await checked('downloads', async () => {
          const torrents = (await soak.freshClient().torrents()) as unknown as Torrent[];
          return auditDownloads({
            items: await allItems(aws.documents, config.tables.downloads),
            created: downloads.created,
            torrents,
            category,
            foreign: foreignBefore && {
              before: foreignBefore,
              after: torrents.find((t) => t.hash === foreignBefore.hash),
            },
          });
        })),
        ...(await checked('sync', async () =>
          auditSync({
            items: await allItems(aws.documents, config.tables.sync),
            connections,
            end: loadEnd,
            hourMs,
            windows,
            logs,
          }),
        )),
        ...(await checked('telegram', async () =>
          auditTelegram({
            records: await streamRecords(
              aws.dynamodb,
              { region: config.region, endpoint: config.endpoints.dynamodb },
              config.tables.downloads,
            ),
            chats,
            items: await allItems(aws.documents, env.TABLE_TELEGRAM!),
            messages: await emulatorMessages(telegramUrl),
            presses,
            windows,
          }),
        )),
        ...auditStack({ deaths: soak.deaths, fatal: soak.fatal, windows, logs, serverErrors: recorder.serverErrors }),
      ];
    };
    const violations = await audit();
    recorder.count('scan final envelope copies (same Nats-Msg-Id)', envelopeCopies(seen));
    const report = buildReport({
      startedAt,
      endedAt: now(),
      minutes: o.minutes,
      seed: o.seed,
      chaos: o.chaos,
      recorder,
      windows,
      violations,
      notes,
    });
    return { report, stack: soak, audit, stop: cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** The service answers as usual: deep health (every dependency) and a NATS round trip to a function. */
async function probe(soak: SoakStack, nc: NatsConnection): Promise<boolean> {
  const res = await fetch(`${soak.httpUrl}/healthcheck/deep`, {
    headers: { authorization: `Bearer ${soak.token}` },
    signal: AbortSignal.timeout(5000),
  });
  if (res.status !== 200) return false;
  await nc.request('health.ping', 'soak?', { timeout: 5000 });
  return true;
}

/** A torrent of another category, added before the load: the service must never touch it. */
async function plantForeignTorrent(soak: SoakStack): Promise<Torrent | undefined> {
  const hash = randomBytes(20).toString('hex');
  const form = new FormData();
  form.set('urls', `magnet:?xt=urn:btih:${hash}&dn=soak-foreign`);
  form.set('category', FOREIGN_CATEGORY);
  await soak.client.call('POST', 'torrents/add', form);
  for (let i = 0; i < 50; i++) {
    const [t] = (await soak.client.torrents(`?hashes=${hash}`)) as unknown as Torrent[];
    if (t) return t;
    await sleep(200);
  }
  return undefined;
}

async function emulatorMessages(telegramUrl: string): Promise<SentMessage[]> {
  const res = await fetch(`${telegramUrl}/emulator/messages`, { signal: AbortSignal.timeout(10_000) });
  return ((await res.json()) as { messages: SentMessage[] }).messages;
}

/**
 * Until the service has settled (every scan answered or its job finished, no sync attempt running, no
 * Telegram delivery in flight) and at least two minute ticks have run (the poll reconciles the client), or the bound.
 */
async function drain(
  bounds: { minMs: number; maxMs: number },
  sent: SentScan[],
  seen: Array<{ job_id: string; status: string }>,
  soak: SoakStack,
  documents: Parameters<typeof allItems>[0],
  syncTable: string,
  say: (line: string) => void,
): Promise<void> {
  const began = Date.now();
  const telegramTable = soak.stack.env.TABLE_TELEGRAM ?? process.env.TABLE_TELEGRAM;
  for (;;) {
    const answered = new Set(seen.filter((e) => e.status !== 'processing').map((e) => e.job_id));
    const scans = sent.filter((s) => !answered.has(s.job_id)).length;
    const running = (await allItems(documents, syncTable).catch(() => [])).filter(
      (i) => i.entity === 'attempt' && i.state === 'running',
    ).length;
    const inFlight = telegramTable
      ? (await allItems(documents, telegramTable).catch(() => [])).filter(
          (i) => i.entity === 'delivery' && (i.status === 'sending' || i.status === 'retrying'),
        ).length
      : 0;
    const elapsed = Date.now() - began;
    if (elapsed >= bounds.minMs && !scans && !running && !inFlight) return;
    if (elapsed >= bounds.maxMs) {
      say(
        `drain bound reached: ${scans} scans unanswered, ${running} attempts running, ${inFlight} deliveries in flight`,
      );
      return;
    }
    await sleep(5000);
  }
}

function showProgress(o: SoakOptions, recorder: Recorder, windows: FaultWindow[], until: number) {
  const loadStart = Date.now();
  const total = until - loadStart;
  const line = () => {
    const done = Math.min(total, Date.now() - loadStart);
    const open = windows.find((w) => !w.end);
    const text = `${progressBar(done, total)} ${Math.round(done / 1000)}/${Math.round(total / 1000)} s  ${recorder.total()} ops  ${windows.length} faults${open ? ` (now: ${open.kind} ${open.target})` : ''}  ${recorder.serverErrors.length} 5xx/no answer`;
    o.progress.write(o.progress.isTTY ? `\r${text}\x1b[K` : `${text}\n`);
  };
  const timer = setInterval(line, o.progress.isTTY ? 1000 : 10_000);
  return {
    stop() {
      clearInterval(timer);
      line();
      if (o.progress.isTTY) o.progress.write('\n');
    },
  };
}

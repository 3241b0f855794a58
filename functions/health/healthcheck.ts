import middy from '@middy/core';
import { Clock, systemClock } from '../../lib/clock';
import { config, perEnvironment } from '../../lib/config';
import { readSecrets } from '../../lib/lambda/secrets';
import { invocationScope } from '../../lib/log';
import { loadScanConfig } from '../../lib/scan/config';
import { awsClients } from '../../lib/aws/clients';
import { natsConnection } from '../../lib/nats/connection';
import {
  cachedProbe,
  COMPONENTS,
  dynamodbProbe,
  healthReport,
  HealthReport,
  hotFolderProbe,
  natsProbe,
  Probe,
  ProbeProblem,
  runProbes,
  runProbesWithDetails,
  s3Probe,
} from '../../lib/health/check';
import { loginGateProblem } from '../../lib/torrents/login-gate';
import { diskRecords, scanWake, torrentLoginGate } from './deps';
import { diskProblem, type DiskRecord } from '../../lib/downloads/disk-guard';
import type { HotFolder } from '../../lib/scan/hotfolder';
import { hotFolderFrom } from '../../lib/scan/hotfolders';
import { json } from '../../lib/http/response';
import { LastKnownHealth } from '../../lib/health/last-known';
import type { WakeRecord } from '../../lib/scan/poller';
import { withTimeout } from '../../lib/util/timeout';
import { SERVICE_VERSION } from '../../lib/version';

export interface HealthcheckDeps {
  probes: Record<string, Probe>;
  /** The scan poller's last recorded wake mode (lib/scan/poller.ts); absent before any poller ran. */
  wake?: () => Promise<WakeRecord | undefined>;
  /** The downloads poll's last look at the torrent client's disk; absent before any poll saw its figures. */
  disk?: () => Promise<DiskRecord | undefined>;
  timeoutMs: number;
  version: string;
  startedAt: number;
  now: Clock;
}

/** Always answers: a down dependency is reported, never thrown. */
export async function healthcheck(deps: HealthcheckDeps): Promise<HealthReport> {
  // A record that cannot be read is left out: the probes say whether its table answers.
  const bounded = <T>(what: string, read?: () => Promise<T | undefined>) =>
    read ? withTimeout(deps.timeoutMs, what, read).catch(() => undefined) : Promise.resolve(undefined);
  const [{ checks, details }, wake, disk] = await Promise.all([
    runProbesWithDetails(deps.probes, deps.timeoutMs),
    bounded('wake mode read', deps.wake),
    bounded('disk record read', deps.disk),
  ]);
  const ago = (at: number) => Math.max(0, Math.floor((deps.now() - at) / 1000));
  if (disk) {
    const problem = diskProblem(disk);
    checks.disk = problem ? 'down' : 'ok';
    if (problem) details.disk = problem;
  }
  const report = healthReport(checks, deps.version, deps.now() - deps.startedAt, details);
  if (wake) report.hotfolder_wake = { mode: wake.mode, recorded_s_ago: ago(wake.at) };
  if (disk) {
    const { at, ...figures } = disk;
    report.disk_space = { ...figures, recorded_s_ago: ago(Date.parse(at)) };
  }
  return report;
}

const startedAt = systemClock();

// Built once per container and again after a secret changed (an SMB folder writes its auth file when created).
const folder = perEnvironment((): HotFolder => {
  const scan = loadScanConfig();
  return hotFolderFrom(scan.hotFolder, scan.dirs);
});

// Cached 5 s so a probe storm cannot hammer the share; a scan config that does not load is a hot folder we cannot reach.
const hotfolder = cachedProbe(
  hotFolderProbe(async () => folder().healthy()),
  5000,
);

function defaultDeps(): HealthcheckDeps {
  const cfg = config();
  const aws = awsClients(cfg);
  return {
    probes: {
      dynamodb: dynamodbProbe(aws.dynamodb, cfg.tables.downloads),
      s3: s3Probe(aws.s3, cfg.buckets.files),
      nats: natsProbe(() => natsConnection(cfg.nats)),
      hotfolder,
      // The login gate, not a call to the client: a healthcheck must never spend one of the few logins it allows.
      torrent_client: async () => {
        const problem = await loginGateProblem(torrentLoginGate(aws.documents, cfg.tables.downloads));
        if (problem) throw new ProbeProblem(problem);
      },
    },
    wake: scanWake(aws.documents, cfg.tables.scan),
    disk: diskRecords(aws.documents, cfg.tables.downloads),
    timeoutMs: cfg.health.probeTimeoutMs,
    version: SERVICE_VERSION,
    startedAt,
    now: systemClock,
  };
}

/** The public route: answers from what this container last measured, never waits long, never probes per request. */
export const PUBLIC_ROUTE = 'GET /healthcheck';

// At most one refresh per 10 s per container; a request waits up to 3 s for one in flight (probes time out at 2 s
// by default). A refresh slower than 12 s (the longest probe timeout plus margin) was frozen or hung: dropped.
const lastKnown = new LastKnownHealth({
  components: COMPONENTS,
  intervalMs: 10_000,
  waitMs: 3_000,
  staleAfterMs: 12_000,
  refresh: async () => {
    const deps = defaultDeps(); // config first: without it nothing can be probed, and the states stay unknown
    await readSecrets();
    return runProbes(deps.probes, deps.timeoutMs);
  },
});

/**
 * `GET /healthcheck` (public) reports each component's last known state, without details; `GET /healthcheck/deep`
 * (bearer, `health:read`) probes every dependency now and says why one is down. Any other event (a direct
 * invoke, a probe of the deployed image) is the deep check.
 */
export const handler = invocationScope(
  middy<{ routeKey?: string }>().handler(async (event) => {
    if (event?.routeKey === PUBLIC_ROUTE) {
      const known = await lastKnown.read();
      return json(200, {
        status: known.status,
        version: SERVICE_VERSION,
        uptime_s: Math.floor((systemClock() - startedAt) / 1000),
        checks: known.checks,
        checked_s_ago: known.checked_s_ago,
      });
    }
    await readSecrets();
    return json(200, await healthcheck(defaultDeps()));
  }),
);

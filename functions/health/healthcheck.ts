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
  dynamodbProbe,
  healthReport,
  HealthReport,
  hotFolderProbe,
  natsProbe,
  Probe,
  ProbeProblem,
  runProbesWithDetails,
  s3Probe,
} from '../../lib/health/check';
import { loginGateProblem } from '../../lib/torrents/login-gate';
import { torrentLoginGate } from './deps';
import type { HotFolder } from '../../lib/scan/hotfolder';
import { hotFolderFrom } from '../../lib/scan/hotfolders';
import { json } from '../../lib/http/response';
import { SERVICE_VERSION } from '../../lib/version';

export interface HealthcheckDeps {
  probes: Record<string, Probe>;
  timeoutMs: number;
  version: string;
  startedAt: number;
  now: Clock;
}

/** Always answers: a down dependency is reported, never thrown. */
export async function healthcheck(deps: HealthcheckDeps): Promise<HealthReport> {
  const { checks, details } = await runProbesWithDetails(deps.probes, deps.timeoutMs);
  return healthReport(checks, deps.version, deps.now() - deps.startedAt, details);
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
    timeoutMs: cfg.health.probeTimeoutMs,
    version: SERVICE_VERSION,
    startedAt,
    now: systemClock,
  };
}

/** The public route: the function answers, nothing else is asked (no dependency, no secret). */
export const LIVENESS_ROUTE = 'GET /healthcheck';

/** Liveness: cheap enough for any prober at any rate, and it tells a stranger nothing about our dependencies. */
export function liveness(deps: Pick<HealthcheckDeps, 'version' | 'startedAt' | 'now'>) {
  return { status: 'ok' as const, version: deps.version, uptime_s: Math.floor((deps.now() - deps.startedAt) / 1000) };
}

/**
 * `GET /healthcheck` (public) is liveness; `GET /healthcheck/deep` (bearer, `health:read`) probes every
 * dependency. Any other event (a direct invoke, a probe of the deployed image) is the deep check.
 */
export const handler = invocationScope(
  middy<{ routeKey?: string }>().handler(async (event) => {
    if (event?.routeKey === LIVENESS_ROUTE)
      return json(200, liveness({ version: SERVICE_VERSION, startedAt, now: systemClock }));
    await readSecrets();
    return json(200, await healthcheck(defaultDeps()));
  }),
);

import { asyncInvoker } from '../../lib/aws/invoke';
import { systemClock } from '../../lib/clock';
import { awsClients } from '../../lib/aws/clients';
import { config, perEnvironment } from '../../lib/config';
import { natsConnection } from '../../lib/nats/connection';
import { publishWithRetries } from '../../lib/nats/publish';
import type { GatewayDeps } from '../../lib/scan/gateway';
import { hotFolderFrom } from '../../lib/scan/hotfolders';
import { normalizerFor } from '../../lib/scan/normalizer';
import { newId } from '../../lib/ident';
import { DynamoDbPollerLease } from '../../lib/scan/dynamodb-lease';
import { ensurePoller, PollerDeps } from '../../lib/scan/poller';
import { scanLog, scanSettings, scanStores } from '../../lib/scan/wiring';
import { SERVICE_VERSION } from '../../lib/version';

/** What the gateway's functions add to the domain's stores (lib/scan/wiring.ts), built once per container. */

export const log = scanLog;

let poller: PollerDeps | undefined;

/** The poller's lease and how a poller is started: an async invocation of SCAN_POLL_FUNCTION. */
export function pollerDeps(): PollerDeps {
  if (!poller) {
    const cfg = config();
    const invoke = asyncInvoker(cfg.region);
    poller = {
      lease: new DynamoDbPollerLease(awsClients(cfg).documents, cfg.tables.scan),
      newId: () => newId(),
      start: (holder) => invoke(scanSettings().pollFunction, { lease_holder: holder }),
    };
  }
  return poller;
}

/** Built again after a secret changed (the SMB password, NATS credentials: lib/config/generation.ts). */
export const scanDeps = perEnvironment((): GatewayDeps => {
  const cfg = config();
  const scan = scanSettings();
  return {
    ...(scan.pollFunction ? { wakePoller: () => ensurePoller(pollerDeps(), systemClock(), log) } : {}),
    jobs: scanStores().jobs,
    files: scanStores().files,
    hotFolder: hotFolderFrom(scan.hotFolder, scan.dirs),
    publish: async (subject, data, msgId) =>
      publishWithRetries(await natsConnection(cfg.nats), subject, data, msgId, scan.publishRetries),
    normalizer: normalizerFor(scan.normalizer, scan.confidenceThreshold),
    config: { ...scan, bucket: cfg.buckets.files },
    service: { name: cfg.service, version: SERVICE_VERSION },
    now: systemClock,
    log,
  };
});

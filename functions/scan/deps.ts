import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { systemClock } from '../../lib/clock';
import { awsClients } from '../../lib/aws/clients';
import { config } from '../../lib/config';
import { loadScanConfig } from '../../lib/scan/config';
import { createLogger } from '../../lib/log';
import { natsConnection } from '../../lib/nats/connection';
import { publishWithRetries } from '../../lib/nats/publish';
import { S3ScanFiles } from '../../lib/scan/s3-files';
import type { GatewayDeps } from '../../lib/scan/gateway';
import { hotFolderFrom } from '../../lib/scan/hotfolders';
import { DynamoDbScanJobStore } from '../../lib/scan/dynamodb-store';
import { normalizerFor } from '../../lib/scan/normalizer';
import { newId } from '../../lib/ident';
import { DynamoDbPollerLease } from '../../lib/scan/dynamodb-lease';
import { ensurePoller, PollerDeps } from '../../lib/scan/poller';
import { SERVICE_VERSION } from '../../lib/version';

/** Production wiring of the scan functions, built once per container. */

export const log = createLogger({ domain: 'scan' });

let stores: { jobs: DynamoDbScanJobStore; files: S3ScanFiles; bucket: string } | undefined;
/** The job store and the files alone: what the operator console reads, without the gateway's settings. */
export function scanStores() {
  if (!stores) {
    const cfg = config();
    const aws = awsClients(cfg);
    stores = {
      jobs: new DynamoDbScanJobStore(aws.documents, cfg.tables.scan),
      files: new S3ScanFiles(aws.s3, cfg.buckets.files),
      bucket: cfg.buckets.files,
    };
  }
  return stores;
}

let settings: ReturnType<typeof loadScanConfig> | undefined;
const scanSettings = () => (settings ??= loadScanConfig());
/** The gateway's slot count (SCAN_MAX_INFLIGHT), for the console. */
export const scanMaxInflight = (): number => scanSettings().maxInflight;

let poller: PollerDeps | undefined;

/**
 * The poller's lease and how a poller is started: an async invocation of SCAN_POLL_FUNCTION (202). Locally
 * AWS_ENDPOINT_URL_LAMBDA points the SDK at serverless offline's Lambda endpoint, so the same call starts it there.
 */
export function pollerDeps(): PollerDeps {
  if (!poller) {
    const cfg = config();
    const scan = scanSettings();
    const lambda = new LambdaClient({ region: cfg.region, maxAttempts: 2 });
    poller = {
      lease: new DynamoDbPollerLease(awsClients(cfg).documents, cfg.tables.scan),
      newId: () => newId(),
      start: async (holder) => {
        const out = await lambda.send(
          new InvokeCommand({
            FunctionName: scan.pollFunction,
            InvocationType: 'Event',
            Payload: new TextEncoder().encode(JSON.stringify({ lease_holder: holder })),
          }),
        );
        if (out.StatusCode !== 202) throw new Error(`invoke ${scan.pollFunction} answered ${out.StatusCode}`);
      },
    };
  }
  return poller;
}

let wired: GatewayDeps | undefined;

export function scanDeps(): GatewayDeps {
  if (!wired) {
    const cfg = config();
    const scan = scanSettings();
    wired = {
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
  }
  return wired;
}

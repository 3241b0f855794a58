import { awsClients } from '../aws/clients';
import { config, perEnvironment } from '../config';
import { createLogger } from '../log';
import { loadScanConfig, ScanConfig } from './config';
import { DynamoDbScanJobStore } from './dynamodb-store';
import { S3ScanFiles } from './s3-files';

/**
 * The scan domain's stores as deployed, from the environment, once per
 * container: the job store and the files bucket. The gateway's own wiring
 * (NATS, the hot folder, the poller's invocations) is in functions/scan/deps.ts;
 * the console reads through this alone, without loading any of it.
 */

export const scanLog = createLogger({ domain: 'scan' });

let stores: { jobs: DynamoDbScanJobStore; files: S3ScanFiles; bucket: string } | undefined;
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

/** Loaded again after a secret changed (the SMB password: lib/config/generation.ts). */
export const scanSettings: () => ScanConfig = perEnvironment(() => loadScanConfig());

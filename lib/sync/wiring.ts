import { awsClients } from '../aws/clients';
import { config } from '../config';
import { createLogger } from '../log';
import { SecretSealer } from '../secrets/sealer';
import { loadSyncConfig, loadTokenKeyring, SyncConfig } from './config';
import { ConnectionService } from './connections';
import type { SyncDataStore } from './data-store';
import { DynamoSyncDataStore } from './dynamodb-data-store';
import { DynamoSyncStore } from './dynamodb-store';
import { HourlyService } from './service';

/**
 * The sync domain as deployed: its services over the sync table, from the
 * environment, once per container. How attempts are dispatched (Lambda
 * invocations) is the sync functions' own wiring (functions/sync/deps.ts); the
 * console reads through this alone.
 */

export const syncLog = createLogger({ domain: 'sync' });

let sealer: SecretSealer | undefined;
let services:
  { hourly: HourlyService; connections: ConnectionService; data: SyncDataStore; settings: SyncConfig } | undefined;

export function syncServices() {
  if (!services) {
    const cfg = config();
    const settings = loadSyncConfig();
    const documents = awsClients(cfg).documents;
    const store = new DynamoSyncStore({ documents, table: cfg.tables.sync });
    services = {
      settings,
      data: new DynamoSyncDataStore({ documents, table: cfg.tables.sync }),
      hourly: new HourlyService({ store, waitBoundMs: settings.waitBoundMs }),
      connections: new ConnectionService({
        store,
        // Only the functions that touch tokens are given SYNC_TOKEN_KEYS (serverless.yml).
        sealer: () => (sealer ??= new SecretSealer(loadTokenKeyring())),
      }),
    };
  }
  return services;
}

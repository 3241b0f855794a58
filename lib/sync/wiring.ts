import { awsClients, DYNAMODB_LIMITS } from '../aws/clients';
import { config } from '../config';
import type { Env } from '../config/env';
import { createLogger } from '../log';
import type { KmsSealer } from '../secrets/kms-sealer';
import { SecretSealer } from '../secrets/sealer';
import { sealerChain, type TokenSealer } from '../secrets/token-sealer';
import { loadSyncConfig, loadTokenSealing, SyncConfig, type TokenSealing } from './config';
import { ConnectionService } from './connections';
import type { SyncDataStore } from './data-store';
import { DynamoSyncDataStore } from './dynamodb-data-store';
import { DynamoSyncStore } from './dynamodb-store';
import type { AdmitPolicy } from './admission';
import { admitPolicy } from './rate-budget';
import { HourlyService } from './service';

/**
 * The sync domain as deployed: its services over the sync table, from the
 * environment, once per container. How attempts are dispatched (Lambda
 * invocations) is the sync functions' own wiring (functions/sync/deps.ts); the
 * console reads through this alone.
 */

export const syncLog = createLogger({ domain: 'sync' });

/** The `purpose` of every KMS encryption context of a sealed token: the key policy may require it. */
export const TOKEN_PURPOSE = 'sync-token';

let store: DynamoSyncStore | undefined;
let kms: { keys: string; sealer: KmsSealer } | undefined;
let services:
  | {
      hourly: HourlyService;
      connections: ConnectionService;
      data: SyncDataStore;
      settings: SyncConfig;
      admit: AdmitPolicy;
    }
  | undefined;

function syncStore(): DynamoSyncStore {
  const cfg = config();
  return (store ??= new DynamoSyncStore({ documents: awsClients(cfg).documents, table: cfg.tables.sync }));
}

/**
 * The token sealer: KMS when SYNC_TOKEN_KMS_KEY is set (a SYNC_TOKEN_KEYS
 * keyring given too only opens the "v1." values sealed before), else the
 * keyring. Read from the settings at every call, since they may come from a
 * secret read at run time (a rotated keyring applies at once); the KMS sealer
 * and its data-key cache stay while its keys do. Only the functions that touch
 * tokens are given these settings (serverless.yml).
 */
export async function tokenSealer(env: Env = process.env): Promise<TokenSealer> {
  return sealerOf(loadTokenSealing(env), (keyIds) => {
    const keys = keyIds.join(',');
    if (kms?.keys !== keys) kms = { keys, sealer: newKmsSealer(keyIds, config().region) };
    return kms.sealer;
  });
}

/** The sealer `sealing` describes; `kmsSealer` makes (or keeps) the KMS one. */
export function sealerOf(sealing: TokenSealing, kmsSealer: (keyIds: string[]) => TokenSealer): TokenSealer {
  const legacy = sealing.keyring && new SecretSealer(sealing.keyring);
  if (sealing.kmsKeys.length === 0) return legacy!;
  // A chain even alone: a "v1." value then fails naming its form and that no sealer reads it.
  return sealerChain(kmsSealer(sealing.kmsKeys), ...(legacy ? [legacy] : []));
}

/** A KMS sealer of tokens. Required at first use: only token functions on AWS evaluate the KMS client (as clients.ts does S3). */
export function newKmsSealer(keyIds: string[], region: string, limits?: typeof DYNAMODB_LIMITS): KmsSealer {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { KmsSealer } = require('../secrets/kms-sealer') as typeof import('../secrets/kms-sealer');
  const { createKmsClient } = require('../aws/kms') as typeof import('../aws/kms');
  /* eslint-enable @typescript-eslint/no-require-imports */
  return new KmsSealer({ kms: createKmsClient(region, limits), keyIds, purpose: TOKEN_PURPOSE });
}

export function syncServices() {
  if (!services) {
    const settings = loadSyncConfig();
    const store = syncStore();
    services = {
      settings,
      data: new DynamoSyncDataStore({ documents: awsClients(config()).documents, table: config().tables.sync }),
      hourly: new HourlyService({ store, waitBoundMs: settings.waitBoundMs, hourMs: settings.hourMs }),
      connections: new ConnectionService({ store, sealer: () => tokenSealer() }),
      // What one minute's tick may start (the tick), and so when a new connection's first sync comes (the reads).
      admit: admitPolicy(
        settings.tbankEgressAddresses,
        settings.tbankRateWindowMs,
        settings.callsPerSync,
        settings.callsPerFirstSync,
      ),
    };
  }
  return services;
}

/** What the reseal (functions/sync/reseal.ts) needs: the connections and the sealer, none of the sync settings. */
export function resealServices() {
  return { store: syncStore(), sealer: () => tokenSealer() };
}

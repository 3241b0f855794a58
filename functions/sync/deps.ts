import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { awsClients } from '../../lib/aws/clients';
import { config, loadSyncConfig, loadTokenKeyring, SyncConfig } from '../../lib/config';
import { createLogger } from '../../lib/log';
import { SecretSealer } from '../../lib/secrets/sealer';
import { DynamoSyncDataStore } from '../../lib/sync/dynamodb-data-store';
import { SyncStore } from '../../lib/sync/dynamodb-store';
import type { Dispatch } from '../../lib/sync/tick';

/** Production wiring of the sync functions, built once per container. */

export const log = createLogger({ domain: 'sync' });

let sealer: SecretSealer | undefined;
let wired: { store: SyncStore; data: DynamoSyncDataStore; settings: SyncConfig; dispatch: Dispatch } | undefined;

export function syncDeps() {
  if (!wired) {
    const cfg = config();
    const settings = loadSyncConfig();
    const lambda = new LambdaClient({ region: cfg.region, maxAttempts: 2 });
    wired = {
      settings,
      data: new DynamoSyncDataStore({ documents: awsClients(cfg).documents, table: cfg.tables.sync }),
      store: new SyncStore({
        documents: awsClients(cfg).documents,
        table: cfg.tables.sync,
        waitBoundMs: settings.waitBoundMs,
        // Only the functions that touch tokens are given SYNC_TOKEN_KEYS (serverless.yml).
        sealer: () => (sealer ??= new SecretSealer(loadTokenKeyring())),
      }),
      // An async invocation (202): the step runs on its own; its row is its report.
      dispatch: async (input) => {
        const out = await lambda.send(
          new InvokeCommand({
            FunctionName: settings.stepFunction,
            InvocationType: 'Event',
            Payload: new TextEncoder().encode(JSON.stringify(input)),
          }),
        );
        if (out.StatusCode !== 202) throw new Error(`invoke ${settings.stepFunction} answered ${out.StatusCode}`);
      },
    };
  }
  return wired;
}

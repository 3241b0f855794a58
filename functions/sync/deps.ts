import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { awsClients } from '../../lib/aws/clients';
import { config } from '../../lib/config';
import { loadSyncConfig, loadTokenKeyring, SyncConfig } from '../../lib/sync/config';
import { createLogger } from '../../lib/log';
import { SecretSealer } from '../../lib/secrets/sealer';
import { ConnectionService } from '../../lib/sync/connections';
import type { SyncDataStore } from '../../lib/sync/data-store';
import { DynamoSyncDataStore } from '../../lib/sync/dynamodb-data-store';
import { DynamoSyncStore } from '../../lib/sync/dynamodb-store';
import { admissionsPerMinute } from '../../lib/sync/rate-budget';
import { HourlyService } from '../../lib/sync/service';
import type { Dispatch } from '../../lib/sync/tick';

/** Production wiring of the sync functions, built once per container: the only place that builds stores. */

export const log = createLogger({ domain: 'sync' });

let sealer: SecretSealer | undefined;
let wired:
  | {
      hourly: HourlyService;
      connections: ConnectionService;
      data: SyncDataStore;
      settings: SyncConfig;
      dispatch: Dispatch;
      fanOut?: (shard: number, quota?: number) => Promise<void>;
      admit: number;
    }
  | undefined;

export function syncDeps() {
  if (!wired) {
    const cfg = config();
    const settings = loadSyncConfig();
    const lambda = new LambdaClient({ region: cfg.region, maxAttempts: 2 });
    const documents = awsClients(cfg).documents;
    const store = new DynamoSyncStore({ documents, table: cfg.tables.sync });
    // An async invocation (202): the invoked function runs on its own.
    const invoke = async (functionName: string, payload: unknown) => {
      const out = await lambda.send(
        new InvokeCommand({
          FunctionName: functionName,
          InvocationType: 'Event',
          Payload: new TextEncoder().encode(JSON.stringify(payload)),
        }),
      );
      if (out.StatusCode !== 202) throw new Error(`invoke ${functionName} answered ${out.StatusCode}`);
    };
    wired = {
      settings,
      // The attempts one minute's tick may start: the egress budget over one sync's calls.
      admit: admissionsPerMinute(settings.tbankEgressAddresses, settings.callsPerSync),
      data: new DynamoSyncDataStore({ documents, table: cfg.tables.sync }),
      hourly: new HourlyService({ store, waitBoundMs: settings.waitBoundMs }),
      connections: new ConnectionService({
        store,
        // Only the functions that touch tokens are given SYNC_TOKEN_KEYS (serverless.yml).
        sealer: () => (sealer ??= new SecretSealer(loadTokenKeyring())),
      }),
      // The step's row is its report.
      dispatch: (input) => invoke(settings.stepFunction, input),
      ...(settings.tickShardFunction
        ? { fanOut: (shard: number, quota?: number) => invoke(settings.tickShardFunction, { shard, quota }) }
        : {}),
    };
  }
  return wired;
}

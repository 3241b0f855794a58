import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { TokenSealer } from '../../lib/secrets/token-sealer';
import { ConnectionService } from '../../lib/sync/connections';
import { DynamoSyncStore } from '../../lib/sync/dynamodb-store';
import { HourlyService } from '../../lib/sync/service';

/** The sync services over one table of DynamoDB Local, wired as lib/sync/wiring.ts wires them. */
export function syncServices(opts: {
  documents: DynamoDBDocumentClient;
  table: string;
  waitBoundMs: number;
  sealer: () => Promise<TokenSealer>;
  /** The sync "hour" (SYNC_HOUR_MS; an hour by default). */
  hourMs?: number;
}) {
  const store = new DynamoSyncStore({ documents: opts.documents, table: opts.table });
  return {
    store,
    hourly: new HourlyService({ store, waitBoundMs: opts.waitBoundMs, hourMs: opts.hourMs }),
    connections: new ConnectionService({ store, sealer: opts.sealer }),
  };
}

/**
 * Jest's fake clock for Date only: the sync's timestamps move with `jest.setSystemTime`, while timers,
 * I/O and performance stay real (the stack's clients and the emulator need them).
 */
export function fakeDateOnly(now?: number): void {
  jest.useFakeTimers({
    now,
    doNotFake: [
      'setTimeout',
      'clearTimeout',
      'setInterval',
      'clearInterval',
      'setImmediate',
      'clearImmediate',
      'nextTick',
      'queueMicrotask',
      'hrtime',
      'performance',
    ],
  });
}

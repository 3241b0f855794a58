import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoLoginGateStore } from '../../lib/torrents/dynamodb-login-gate';
import type { LoginGateStore } from '../../lib/torrents/login-gate';

/** The healthcheck's wiring of domain stores (handlers import stores only through a deps.ts). */
export function torrentLoginGate(documents: DynamoDBDocumentClient, table: string): LoginGateStore {
  return new DynamoLoginGateStore({ documents, table });
}

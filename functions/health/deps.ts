import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoLoginGateStore } from '../../lib/torrents/dynamodb-login-gate';
import type { LoginGateStore } from '../../lib/torrents/login-gate';
import { DynamoDbPollerLease } from '../../lib/scan/dynamodb-lease';
import type { WakeRecord } from '../../lib/scan/poller';
import type { DiskRecord } from '../../lib/downloads/disk-guard';
import { DynamoDiskRecordStore } from '../../lib/downloads/dynamodb-disk';

/** The healthcheck's wiring of domain stores (handlers import stores only through a deps.ts). */
export function torrentLoginGate(documents: DynamoDBDocumentClient, table: string): LoginGateStore {
  return new DynamoLoginGateStore({ documents, table });
}

/** What woke the scan poller last, as it recorded it on its lease item (lib/scan/poller.ts). */
export function scanWake(documents: DynamoDBDocumentClient, table: string): () => Promise<WakeRecord | undefined> {
  return async () => (await new DynamoDbPollerLease(documents, table).read()).wake;
}

/** The downloads poll's last look at the torrent client's disk (lib/downloads/disk-guard.ts). */
export function diskRecords(documents: DynamoDBDocumentClient, table: string): () => Promise<DiskRecord | undefined> {
  return () => new DynamoDiskRecordStore({ documents, table }).read();
}

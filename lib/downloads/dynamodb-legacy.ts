import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../aws/batch';
import { conditionFailed } from '../aws/conditions';
import { queryAll } from '../aws/query';
import { isoTime, parseIsoTime } from '../clock';
import { transactWrite, TransactItem } from '../aws/transact';
import { TransactionCancelledError } from '../aws/errors';
import { refusedGuards, transactItems } from './dynamodb-plan';
import { importable, importedAsFailed, planImport, refuseSharedHashes } from './guards';
import {
  downloadFromItem,
  downloadKey,
  guardFromItem,
  guardKey,
  infohashPartition,
  LEGACY_ID_PREFIX,
  LEGACY_IMPORT_KEY,
  LEGACY_PARTITION,
  legacyIdFromItem,
  legacyIdFromSortKey,
  legacyImportItem,
  MEMBERSHIP_SORT_PREFIX,
  membershipFromItem,
} from './keys';
import type { Download } from './model';
import type { LegacyCheckStore, LegacyImportOutcome, LegacyImportStore } from './store';

/** Reads in flight at once for the legacy import's check (BatchGets of 100 keys, Queries of one hash). */
const CHECK_READS_IN_FLIGHT = 8;
/** DynamoDB's limit of items in one TransactWriteItems. */
const MAX_TRANSACT_ITEMS = 100;

/**
 * The legacy import's writes (lib/downloads/legacy.ts) and its final check's
 * consistent reads (legacy-check.ts) on the downloads table. What each row
 * writes is planned in guards.ts (`planImport`); this file cuts rows into
 * transactions and reads the import's own items.
 */
export class DynamoLegacyImport implements LegacyImportStore, LegacyCheckStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  async importDownloadIfNoActive(download: Download, legacyId: string): Promise<LegacyImportOutcome> {
    const imported = importable(download);
    try {
      await transactWrite(this.documents, this.items(imported, legacyId));
      return { outcome: 'imported', download: imported };
    } catch (err) {
      const done = alreadyImported(err);
      if (done) return { outcome: 'already', id: done };
      const owner = refusedGuards(err)[0];
      if (!owner) throw err;
      // The owner keeps the hash; this row arrives finished, its history kept.
      const failed = importedAsFailed(imported);
      try {
        await transactWrite(this.documents, this.items(failed, legacyId));
      } catch (again) {
        const doneMeanwhile = alreadyImported(again);
        if (doneMeanwhile) return { outcome: 'already', id: doneMeanwhile };
        throw again;
      }
      return { outcome: 'conflict', download: failed, infohash: owner.infohash, ownerId: owner.ownerId };
    }
  }

  /**
   * The usual case in one transaction for many rows (a transaction per row
   * costs the emulator and the service far more than its items): rows are cut
   * into transactions of at most 100 items; each is written whole, or, when
   * any of its rows is refused, not at all, and its rows go again one by one
   * (a row that fails alone is an `error` outcome, not the batch's).
   */
  async importDownloadsIfNoActive(
    rows: Array<{ download: Download; legacyId: string }>,
  ): Promise<LegacyImportOutcome[]> {
    const shared = refuseSharedHashes(rows);
    if (shared) throw shared;
    const chunks: Array<Array<{ download: Download; legacyId: string; items: TransactItem[] }>> = [[]];
    for (const r of rows) {
      const download = importable(r.download);
      const items = this.items(download, r.legacyId);
      const last = chunks[chunks.length - 1];
      if (last.reduce((n, c) => n + c.items.length, 0) + items.length > MAX_TRANSACT_ITEMS) chunks.push([]);
      chunks[chunks.length - 1].push({ download, legacyId: r.legacyId, items });
    }
    const outcomes = await Promise.all(
      chunks.map(async (chunk): Promise<LegacyImportOutcome[]> => {
        if (chunk.length > 1) {
          try {
            await transactWrite(
              this.documents,
              chunk.flatMap((c) => c.items),
            );
            return chunk.map((c) => ({ outcome: 'imported', download: c.download }));
          } catch (err) {
            if (!(err instanceof TransactionCancelledError)) throw err;
          }
        }
        // Alone, a row's failure is its own: its neighbours' outcomes are still reported.
        return Promise.all(
          chunk.map((c) =>
            this.importDownloadIfNoActive(c.download, c.legacyId).catch((error: Error): LegacyImportOutcome => ({
              outcome: 'error',
              error,
            })),
          ),
        );
      }),
    );
    return outcomes.flat();
  }

  async legacyImports(): Promise<Map<string, string>> {
    const items = await queryAll(this.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :id)',
      ExpressionAttributeValues: { ':pk': LEGACY_PARTITION, ':id': LEGACY_ID_PREFIX },
      ConsistentRead: true,
    });
    return new Map(items.map((i) => [legacyIdFromSortKey(i.SK as string), legacyIdFromItem(i).download_id]));
  }

  async legacyImportTime(now: number): Promise<number> {
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.table,
          Item: legacyImportItem(isoTime(now)),
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
      return now;
    } catch (err) {
      if (!conditionFailed(err)) throw err;
    }
    // An earlier run wrote the marker: its time stands.
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: LEGACY_IMPORT_KEY, ConsistentRead: true }),
    );
    const started = parseIsoTime(Item?.started_at);
    if (started === undefined) throw new Error('the legacy import marker has no valid started_at');
    return started;
  }

  async downloadsById(ids: string[]): Promise<Map<string, Download>> {
    const found = new Map<string, Download>();
    // BatchGet refuses a key twice
    await eachLimited(chunksOf([...new Set(ids)]), CHECK_READS_IN_FLIGHT, async (chunk) => {
      const items = await batchGetAll(this.documents, this.table, chunk.map(downloadKey), { consistentRead: true });
      for (const item of items) {
        const download = downloadFromItem(item);
        found.set(download.id, download);
      }
    });
    return found;
  }

  async guardsOf(hashes: string[]): Promise<Map<string, string>> {
    const guards = new Map<string, string>();
    await eachLimited(chunksOf([...new Set(hashes)]), CHECK_READS_IN_FLIGHT, async (chunk) => {
      const items = await batchGetAll(this.documents, this.table, chunk.map(guardKey), { consistentRead: true });
      for (const item of items) {
        const guard = guardFromItem(item);
        guards.set(guard.infohash, guard.download_id);
      }
    });
    return guards;
  }

  async membersOf(hashes: string[]): Promise<Map<string, string[]>> {
    const members = new Map<string, string[]>();
    await eachLimited([...new Set(hashes)], CHECK_READS_IN_FLIGHT, async (infohash) => {
      const items = await queryAll(this.documents, {
        TableName: this.table,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :dl)',
        ExpressionAttributeValues: { ':pk': infohashPartition(infohash), ':dl': MEMBERSHIP_SORT_PREFIX },
        ConsistentRead: true,
      });
      members.set(
        infohash,
        items.map((i) => membershipFromItem(i).download_id),
      );
    });
    return members;
  }

  private items(d: Download, legacyId: string): TransactItem[] {
    return transactItems(this.table, planImport(d, legacyId));
  }
}

/** The download id of a legacy-id item that refused the import: that row was imported before. */
function alreadyImported(err: unknown): string | undefined {
  if (!(err instanceof TransactionCancelledError)) return undefined;
  const [first] = err.reasons;
  return first?.code === 'ConditionalCheckFailed' && first.item?.entity === 'legacy-id'
    ? legacyIdFromItem(first.item).download_id
    : undefined;
}

/** BatchGet's 100 keys a call. */
function chunksOf<T>(items: T[]): T[][] {
  const chunks = [];
  for (let i = 0; i < items.length; i += 100) chunks.push(items.slice(i, i + 100));
  return chunks;
}

/** Runs `work` on every item, at most `limit` at once. */
async function eachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../aws/batch';
import { queryAll } from '../aws/query';
import { DownloadNotFoundError } from './errors';
import {
  downloadFromItem,
  downloadKey,
  guardFromItem,
  guardKey,
  infohashPartition,
  LIST_INDEX,
  LIST_PARTITION,
  listIndexKeys,
  MEMBERSHIP_SORT_PREFIX,
  membershipFromItem,
  PREFIX_INDEX,
  prefixShard,
  SHARE_REMOVAL_PARTITION,
  shareRemovalFromItem,
} from './keys';
import { ACTIVE_STATES, Download } from './model';
import type { ListPage, ListQuery } from './store';

/** Name search filters the newest-first index; this bounds the items one call reads. */
const NAME_SEARCH_BUDGET = 1000;
const PREFIX_SEARCH_CAP = 1000;

export interface ReadDeps {
  documents: DynamoDBDocumentClient;
  table: string;
}

/**
 * The downloads table's reads: one download, the active owner of a hash, a
 * hash's history, the list and its searches. For display and matching; never
 * a guard (the writes in dynamodb-store.ts are conditional on what they read).
 */
export class DynamoDownloadReads {
  protected readonly documents: DynamoDBDocumentClient;
  protected readonly table: string;

  constructor(deps: ReadDeps) {
    this.documents = deps.documents;
    this.table = deps.table;
  }

  async get(id: string): Promise<Download | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: downloadKey(id), ConsistentRead: true }),
    );
    return Item ? downloadFromItem(Item) : undefined;
  }

  async findActiveByInfohash(infohash: string): Promise<Download | undefined> {
    const holder = await this.guardHolder(infohash);
    return holder ? this.get(holder) : undefined;
  }

  async historyOfInfohash(infohash: string): Promise<Download[]> {
    const memberships = await queryAll(this.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :pk AND begins_with(SK, :dl)',
      ExpressionAttributeValues: { ':pk': infohashPartition(infohash), ':dl': MEMBERSHIP_SORT_PREFIX },
      ScanIndexForward: false,
    });
    return this.getMany(memberships.map((m) => membershipFromItem(m).download_id));
  }

  async listActive(): Promise<Download[]> {
    const items = await queryAll(this.documents, {
      TableName: this.table,
      IndexName: LIST_INDEX,
      KeyConditionExpression: 'GSI1PK = :p',
      FilterExpression: '#state IN (' + ACTIVE_STATES.map((_, i) => `:s${i}`).join(', ') + ')',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':p': LIST_PARTITION,
        ...Object.fromEntries(ACTIVE_STATES.map((s, i) => [`:s${i}`, s])),
      },
    });
    return items.map(downloadFromItem);
  }

  async pendingShareRemovals(): Promise<string[]> {
    const items = await queryAll(this.documents, {
      TableName: this.table,
      KeyConditionExpression: 'PK = :p',
      ExpressionAttributeValues: { ':p': SHARE_REMOVAL_PARTITION },
      ConsistentRead: true,
    });
    return items.map(shareRemovalFromItem);
  }

  async list(query: ListQuery): Promise<ListPage> {
    const q = query.q?.trim();
    if (q && /^[0-9a-f]{4,64}$/i.test(q)) return this.listByHashPrefix(q.toLowerCase(), query);
    return this.listNewestFirst(q?.toLowerCase() || undefined, query);
  }

  /** The download the guard of `infohash` names, from a consistent read; undefined when no active download holds it. */
  protected async guardHolder(infohash: string): Promise<string | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: guardKey(infohash), ConsistentRead: true }),
    );
    return Item ? guardFromItem(Item).download_id : undefined;
  }

  /** One consistent BatchGet of a hash's guard and a download: who holds the guard, and that download as it is. */
  protected async guardAndDownload(
    infohash: string,
    id: string,
  ): Promise<{ holder: string | undefined; download: Download | undefined }> {
    const items = await batchGetAll(this.documents, this.table, [guardKey(infohash), downloadKey(id)], {
      consistentRead: true,
    });
    const guard = items.find((i) => i.PK === guardKey(infohash).PK && i.SK === guardKey(infohash).SK);
    const row = items.find((i) => i.PK === downloadKey(id).PK);
    return {
      holder: guard ? guardFromItem(guard).download_id : undefined,
      download: row ? downloadFromItem(row) : undefined,
    };
  }

  protected async mustGet(id: string): Promise<Download> {
    const current = await this.get(id);
    if (!current) throw new DownloadNotFoundError(id);
    return current;
  }

  private async listNewestFirst(nameContains: string | undefined, query: ListQuery): Promise<ListPage> {
    const items: Download[] = [];
    let startKey = query.after ? { ...downloadKey(query.after), ...listIndexKeys(query.after) } : undefined;
    const filtered = nameContains !== undefined || query.state !== undefined;
    const filters = [...(nameContains ? ['contains(name_lc, :q)'] : []), ...(query.state ? ['#state = :state'] : [])];
    let budget = filtered ? NAME_SEARCH_BUDGET : query.limit;
    while (items.length < query.limit && budget > 0) {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: LIST_INDEX,
          KeyConditionExpression: 'GSI1PK = :p',
          ExpressionAttributeValues: {
            ':p': LIST_PARTITION,
            ...(nameContains ? { ':q': nameContains } : {}),
            ...(query.state ? { ':state': query.state } : {}),
          },
          ...(query.state ? { ExpressionAttributeNames: { '#state': 'state' } } : {}),
          FilterExpression: filters.length > 0 ? filters.join(' AND ') : undefined,
          ScanIndexForward: false,
          Limit: Math.min(budget, filtered ? 100 : query.limit - items.length),
          ExclusiveStartKey: startKey,
        }),
      );
      budget -= page.ScannedCount ?? 0;
      for (const item of page.Items ?? []) {
        // More matches than fit: resume right after the last one returned.
        if (items.length === query.limit) return { items, next: items[items.length - 1].id };
        items.push(downloadFromItem(item));
      }
      if (!page.LastEvaluatedKey) return { items };
      startKey = page.LastEvaluatedKey as typeof startKey;
    }
    // Resume after the last item returned, or, when the budget ran out first, after the last item read.
    const next = items.length === query.limit ? items[items.length - 1].id : (startKey!.GSI1SK as string);
    return { items, next };
  }

  private async listByHashPrefix(prefix: string, query: ListQuery): Promise<ListPage> {
    const memberships = await queryAll(
      this.documents,
      {
        TableName: this.table,
        IndexName: PREFIX_INDEX,
        KeyConditionExpression: 'GSI2PK = :shard AND begins_with(GSI2SK, :prefix)',
        ExpressionAttributeValues: { ':shard': prefixShard(prefix), ':prefix': prefix },
      },
      PREFIX_SEARCH_CAP,
    );
    const ids = [...new Set(memberships.map((m) => membershipFromItem(m).download_id))]
      .filter((id) => !query.after || id < query.after)
      .sort()
      .reverse();
    if (query.state) {
      // The prefix search is capped (PREFIX_SEARCH_CAP), so reading its matches whole to filter by state is bounded.
      const matching = (await this.getMany(ids)).filter((d) => d.state === query.state);
      const page = matching.slice(0, query.limit);
      return { items: page, next: matching.length > query.limit ? page[page.length - 1].id : undefined };
    }
    const page = ids.slice(0, query.limit);
    return { items: await this.getMany(page), next: ids.length > query.limit ? page[page.length - 1] : undefined };
  }

  /** Downloads by id, in the order given (BatchGet answers in any order, 100 keys a call). */
  private async getMany(ids: string[]): Promise<Download[]> {
    const items = await batchGetAll(this.documents, this.table, ids.map(downloadKey));
    const found = new Map(items.map((item) => [item.id as string, downloadFromItem(item)]));
    return ids.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
  }
}

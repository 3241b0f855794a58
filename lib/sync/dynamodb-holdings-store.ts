import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../aws/batch';
import { queryAll } from '../aws/query';
import {
  accountFromItem,
  eventsFromItem,
  type HoldingsStore,
  instrumentFromItem,
  portfolioFromItem,
} from './holdings-store';
import { accountsPrefix, eventsPrefix, instrumentKey, portfolioPrefix, userPartition } from './keys';
import type { Instrument } from './tbank/contract';

/** The holdings' reads on DynamoDB: one query per kind of item in the user's partition, the catalog in batches. */
export class DynamoHoldingsStore implements HoldingsStore {
  constructor(private readonly deps: { documents: DynamoDBDocumentClient; table: string }) {}

  private byPrefix(user: string, prefix: string) {
    return queryAll(this.deps.documents, {
      TableName: this.deps.table,
      KeyConditionExpression: 'PK = :p AND begins_with(SK, :s)',
      ExpressionAttributeValues: { ':p': userPartition(user), ':s': prefix },
      // A portfolio step that just finished is read, not the one before it.
      ConsistentRead: true,
    });
  }

  async portfolios(user: string) {
    return (await this.byPrefix(user, portfolioPrefix)).map(portfolioFromItem);
  }

  async accounts(user: string) {
    return (await this.byPrefix(user, accountsPrefix)).map(accountFromItem);
  }

  async events(user: string) {
    return (await this.byPrefix(user, eventsPrefix)).map(eventsFromItem);
  }

  async instruments(uids: string[]): Promise<Map<string, Instrument>> {
    // A uid unfit for a key was never fetched into the catalog (catalog.enrichment refuses it): nothing to read.
    const keys = [...new Set(uids)].flatMap((uid) => {
      try {
        return [instrumentKey(uid)];
      } catch {
        return [];
      }
    });
    const items = await batchGetAll(this.deps.documents, this.deps.table, keys);
    return new Map(items.map(instrumentFromItem).map((i) => [i.uid, i]));
  }
}

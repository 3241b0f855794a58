import { awsClients } from '../aws/clients';
import { config } from '../config';
import { DynamoFeedTokenStore } from './dynamodb-feed-tokens';
import { DynamoHoldingsStore } from './dynamodb-holdings-store';
import { FeedTokenService } from './feed-tokens';
import { HoldingsService } from './holdings-service';
import { syncServices } from './wiring';

/** The holdings' reads and the feed tokens as deployed (the read routes, the feed, the console), once per container. */
let wired: { holdings: HoldingsService; feeds: FeedTokenService } | undefined;

export function holdingsServices() {
  if (!wired) {
    const cfg = config();
    const deps = { documents: awsClients(cfg).documents, table: cfg.tables.sync };
    const { hourly } = syncServices();
    wired = {
      holdings: new HoldingsService({
        store: new DynamoHoldingsStore(deps),
        attempts: (user, limit) => hourly.attempts(user, limit),
      }),
      feeds: new FeedTokenService(new DynamoFeedTokenStore(deps)),
    };
  }
  return wired;
}

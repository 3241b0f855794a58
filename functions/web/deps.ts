import { awsClients } from '../../lib/aws/clients';
import { config } from '../../lib/config';
import { loadTelegramConfig } from '../../lib/telegram/config';
import { DynamoDeliveryStore } from '../../lib/telegram/dynamodb-store';

/** Wiring of the web functions' own stores, built once per container. */

let deliveries: DynamoDeliveryStore | undefined;
/** The failed Telegram deliveries the console lists, read with the table name alone: no bot token, no Telegram client. */
export function consoleDeliveries(): DynamoDeliveryStore {
  deliveries ??= new DynamoDeliveryStore({
    documents: awsClients(config()).documents,
    table: loadTelegramConfig().table,
  });
  return deliveries;
}

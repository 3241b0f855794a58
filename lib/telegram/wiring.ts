import { awsClients } from '../aws/clients';
import { config } from '../config';
import { createLogger } from '../log';
import { loadTelegramConfig, TelegramConfig } from './config';
import { DynamoDeliveryStore } from './dynamodb-store';

/**
 * The Telegram domain as deployed, from the environment, once per container:
 * its settings and the delivery store, which needs the table name alone (the
 * console lists failures through it without loading the Bot API client). The
 * notifier, the only part that sends, is notifier-wiring.ts; the bot is the
 * webhook's (functions/telegram/deps.ts).
 */

export const telegramLog = createLogger({ domain: 'telegram' });

let settings: TelegramConfig | undefined;
export function telegramConfig(): TelegramConfig {
  settings ??= loadTelegramConfig();
  return settings;
}

let deliveries: DynamoDeliveryStore | undefined;
export function deliveryStore(): DynamoDeliveryStore {
  deliveries ??= new DynamoDeliveryStore({ documents: awsClients(config()).documents, table: telegramConfig().table });
  return deliveries;
}

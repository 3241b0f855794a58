import { awsClients } from '../aws/clients';
import { config, perEnvironment } from '../config';
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

/** Loaded again after a secret changed (the bot token rotated: lib/config/generation.ts). */
export const telegramConfig: () => TelegramConfig = perEnvironment(() => loadTelegramConfig());

export const deliveryStore = perEnvironment(
  () => new DynamoDeliveryStore({ documents: awsClients(config()).documents, table: telegramConfig().table }),
);

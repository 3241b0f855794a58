import { awsClients } from '../aws/clients';
import { config, perEnvironment } from '../config';
import { loadLocaleSettings } from '../i18n';
import { createLogger } from '../log';
import { loadTelegramConfig, TelegramConfig } from './config';
import { DynamoChatLanguages } from './dynamodb-languages';
import { DynamoDeliveryStore } from './dynamodb-store';
import { DynamoStatusStore } from './dynamodb-status';

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

/** The downloads' status messages (decision 456), in the same table. */
export const statusStore = perEnvironment(
  () => new DynamoStatusStore({ documents: awsClients(config()).documents, table: telegramConfig().table }),
);

/** Each chat's /lang choice (decision 340), in the same table. */
export const chatLanguages = perEnvironment(
  () => new DynamoChatLanguages({ documents: awsClients(config()).documents, table: telegramConfig().table }),
);

/** UI_LANGUAGE and UI_TIME_ZONE (lib/i18n), as the web pages read them. */
export const botLocaleSettings = perEnvironment(() => loadLocaleSettings());

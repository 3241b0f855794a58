import { awsClients } from '../aws/clients';
import { config } from '../config';
import { createLogger } from '../log';
import { GrammySender } from './api';
import { loadTelegramConfig, TelegramConfig } from './config';
import { DynamoDeliveryStore } from './dynamodb-store';
import { DEFAULT_POLICY, NotifierDeps } from './notifier';
import { Pacer, TELEGRAM_RATES } from './pacer';

/**
 * The Telegram domain as deployed, from the environment, once per container:
 * the delivery store (what the console lists needs the table name alone) and
 * the notifier (the only part that needs the bot token). The bot itself is
 * the webhook's wiring (functions/telegram/deps.ts).
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

let notifier: NotifierDeps | undefined;
export function notifierDeps(): NotifierDeps {
  if (!notifier) {
    const tg = telegramConfig();
    notifier = {
      deliveries: deliveryStore(),
      moves: deliveryStore(),
      pacer: new Pacer({ ...TELEGRAM_RATES, ...tg.pace }),
      sender: new GrammySender({ token: tg.token, apiRoot: tg.apiRoot, timeoutMs: tg.timeoutMs }),
      chats: tg.chats,
      uiBase: tg.publicUiUrl,
      log: telegramLog,
      policy: {
        ...DEFAULT_POLICY,
        attempts: tg.sendAttempts,
        boundMs: tg.sendBoundMs,
        leaseMs: tg.timeoutMs * 2 + 5000,
      },
    };
  }
  return notifier;
}

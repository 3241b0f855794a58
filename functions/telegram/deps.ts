import type { Bot } from 'grammy';
import { awsClients } from '../../lib/aws/clients';
import { config } from '../../lib/config';
import { loadTelegramConfig, TelegramConfig } from '../../lib/telegram/config';
import { createLogger } from '../../lib/log';
import { GrammySender } from '../../lib/telegram/api';
import { createBot } from '../../lib/telegram/bot';
import { DynamoDeliveryStore } from '../../lib/telegram/dynamodb-store';
import { DEFAULT_POLICY, NotifierDeps } from '../../lib/telegram/notifier';
import { Pacer, TELEGRAM_RATES } from '../../lib/telegram/pacer';
import { downloadsDeps } from '../downloads/deps';

/** The production wiring of the telegram functions, built once per container. */

export const log = createLogger({ domain: 'telegram' });

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
      log,
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

let bot: Promise<Bot> | undefined;
/** The bot, initialised (getMe) once per container; a failed init is retried by the next update. */
export function telegramBot(): Promise<Bot> {
  if (!bot) {
    const tg = telegramConfig();
    const created = createBot({
      client: { token: tg.token, apiRoot: tg.apiRoot, timeoutMs: tg.timeoutMs },
      downloads: downloadsDeps(),
      access: { chats: tg.chats, users: new Set(tg.users) },
      updates: deliveryStore(),
      moves: deliveryStore(),
      uiBase: tg.publicUiUrl,
      log,
    });
    bot = created.init().then(() => created);
    bot.catch(() => (bot = undefined));
  }
  return bot;
}

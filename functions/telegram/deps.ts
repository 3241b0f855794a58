import type { Bot } from 'grammy';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { createBot } from '../../lib/telegram/bot';
import { deliveryStore, telegramConfig, telegramLog } from '../../lib/telegram/wiring';

/** What the webhook adds to the domain's wiring (lib/telegram/wiring.ts): the bot, over the downloads service. */

export const log = telegramLog;

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

import type { Bot } from 'grammy';
import { environmentGeneration } from '../../lib/config';
import { downloadsDeps } from '../../lib/downloads/wiring';
import { createBot } from '../../lib/telegram/bot';
import {
  botLocaleSettings,
  chatLanguages,
  deliveryStore,
  telegramConfig,
  telegramLog,
} from '../../lib/telegram/wiring';

/** What the webhook adds to the domain's wiring (lib/telegram/wiring.ts): the bot, over the downloads service. */

export const log = telegramLog;

let bot: { ready: Promise<Bot>; generation: number } | undefined;
/**
 * The bot, initialised (getMe) once per container and again after its token was rotated
 * (lib/config/generation.ts); a failed init is retried by the next update.
 */
export function telegramBot(): Promise<Bot> {
  if (!bot || bot.generation !== environmentGeneration()) {
    const tg = telegramConfig();
    const created = createBot({
      client: { token: tg.token, apiRoot: tg.apiRoot, timeoutMs: tg.timeoutMs },
      downloads: downloadsDeps(),
      access: { chats: tg.chats, users: new Set(tg.users) },
      updates: deliveryStore(),
      moves: deliveryStore(),
      languages: chatLanguages(),
      locale: botLocaleSettings(),
      uiBase: tg.publicUiUrl,
      log,
    });
    const ready = created.init().then(() => created);
    bot = { ready, generation: environmentGeneration() };
    ready.catch(() => {
      if (bot?.ready === ready) bot = undefined;
    });
  }
  return bot.ready;
}

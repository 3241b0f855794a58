import { GrammySender } from './api';
import { DEFAULT_POLICY, NotifierDeps } from './notifier';
import { Pacer, TELEGRAM_RATES } from './pacer';
import { perEnvironment } from '../config';
import { botLocaleSettings, chatLanguages, deliveryStore, statusStore, telegramConfig, telegramLog } from './wiring';

/** The notifier as deployed: the one part of the domain that holds the bot token and loads the Bot API client. */

export const notifierDeps = perEnvironment((): NotifierDeps => {
  const tg = telegramConfig();
  return {
    deliveries: deliveryStore(),
    moves: deliveryStore(),
    statuses: statusStore(),
    languages: chatLanguages(),
    locale: botLocaleSettings(),
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
});

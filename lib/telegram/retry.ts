import type { DownloadStore } from '../downloads/store';
import type { Logger } from '../log';
import type { TelegramSender } from './api';
import { TelegramApiError } from './errors';
import type { Lang } from '../i18n';
import { botLocale, keyboard, notificationText, notifiedOf } from './format';
import { chatLanguage } from './language';
import { EVENT_KINDS, EventKind } from './model';
import type { ChatLanguages, DeliveryStore } from './store';

/**
 * An operator's retry of a delivery the notifier gave up on (the console's
 * Failures page). At most once, like the notifier: the failure is claimed by
 * ONE conditional write before the send; a definite refusal (Telegram
 * answered with an error: nothing went out) gives the claim back for another
 * try; no answer keeps it, because the message may have been delivered.
 * The message shows the download as it is now, in the chat's language.
 */

export interface RetryDeps {
  deliveries: DeliveryStore;
  downloads: Pick<DownloadStore, 'get'>;
  sender: TelegramSender;
  languages: Pick<ChatLanguages, 'languageOf'>;
  locale: { language?: Lang; timeZone: string };
  uiBase: string;
  now: () => number;
  log: Logger;
}

export type RetryOutcome =
  | { outcome: 'sent'; message_id: number }
  | { outcome: 'missing' | 'taken' | 'no-download' }
  | { outcome: 'refused' | 'unknown'; reason: string };

export async function retryFailure(deps: RetryDeps, id: string): Promise<RetryOutcome> {
  const claim = await deps.deliveries.claimRetry(id, deps.now());
  if (claim === 'missing' || claim === 'taken') return { outcome: claim };
  const log = deps.log.child({ failure_id: id, download_id: claim.download_id, chat_id: claim.chat_id });
  const kind = (EVENT_KINDS as readonly string[]).includes(claim.kind) ? (claim.kind as EventKind) : undefined;
  const download = kind && claim.download_id ? await deps.downloads.get(claim.download_id) : undefined;
  if (!kind || !download) {
    // Nothing to send (an unreadable record, or the download is gone): nothing went out, the claim goes back.
    await deps.deliveries.releaseRetry(id, claim.retried_at!);
    log.warn('notification_retry_nothing_to_send', { kind: claim.kind });
    return { outcome: 'no-download' };
  }
  try {
    const chosen = await deps.languages.languageOf(claim.chat_id);
    const locale = botLocale(chatLanguage({ chosen, fixed: deps.locale.language }), deps.locale.timeZone);
    const text = notificationText(kind, notifiedOf(download), deps.uiBase, locale);
    const send = (chatId: number) => deps.sender.sendMessage(chatId, text, keyboard(download.id, locale.messages));
    const messageId = await send(claim.chat_id).catch((err: unknown) => {
      // The group became a supergroup since: Telegram names the new chat, and nothing went out to the old one.
      if (!(err instanceof TelegramApiError) || err.migrateToChatId === undefined) throw err;
      log.warn('telegram_chat_migrated', { from_chat_id: claim.chat_id, to_chat_id: err.migrateToChatId });
      return send(err.migrateToChatId);
    });
    await deps.deliveries.retrySent(id, messageId);
    log.info('notification_retried', { message_id: messageId });
    return { outcome: 'sent', message_id: messageId };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    if (err instanceof TelegramApiError) {
      await deps.deliveries.releaseRetry(id, claim.retried_at!);
      log.warn('notification_retry_refused', { err });
      return { outcome: 'refused', reason };
    }
    log.error('notification_retry_unknown', { err });
    return { outcome: 'unknown', reason };
  }
}

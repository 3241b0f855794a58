import { Api, GrammyError, HttpError } from 'grammy';
import { TelegramApiError, TelegramNetworkError } from './errors';
import type { InlineKeyboard } from './format';

/**
 * The Bot API calls the notifier makes, through grammY's client (its apiRoot
 * points at the emulator locally). grammY's errors are mapped to ours so the
 * retry policy never depends on the framework.
 */
export interface TelegramSender {
  sendMessage(chatId: number, html: string, keyboard?: InlineKeyboard): Promise<number>;
}

export interface TelegramClientOptions {
  token: string;
  apiRoot?: string;
  timeoutMs: number;
}

export function grammyClientConfig(opts: TelegramClientOptions) {
  return {
    ...(opts.apiRoot ? { apiRoot: opts.apiRoot.replace(/\/$/, '') } : {}),
    timeoutSeconds: Math.max(1, Math.ceil(opts.timeoutMs / 1000)),
  };
}

export class GrammySender implements TelegramSender {
  private readonly api: Api;

  constructor(opts: TelegramClientOptions) {
    this.api = new Api(opts.token, grammyClientConfig(opts));
  }

  async sendMessage(chatId: number, html: string, keyboard?: InlineKeyboard): Promise<number> {
    try {
      const sent = await this.api.sendMessage(chatId, html, {
        parse_mode: 'HTML',
        link_preview_options: { is_disabled: true },
        ...(keyboard ? { reply_markup: keyboard } : {}),
      });
      return sent.message_id;
    } catch (err) {
      throw toSendError('sendMessage', err);
    }
  }
}

export function toSendError(method: string, err: unknown): Error {
  if (err instanceof GrammyError)
    return new TelegramApiError(
      method,
      err.error_code,
      err.description,
      err.parameters?.retry_after,
      err.parameters?.migrate_to_chat_id,
    );
  if (err instanceof HttpError) return new TelegramNetworkError(method, err.message);
  return err instanceof Error ? err : new Error(String(err));
}

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
  /** A status message edited in place (decision 456); Telegram's refusals come as TelegramApiError. */
  editMessageText?(chatId: number, messageId: number, html: string, keyboard?: InlineKeyboard): Promise<void>;
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

  async editMessageText(chatId: number, messageId: number, html: string, keyboard?: InlineKeyboard): Promise<void> {
    try {
      await this.api.editMessageText(chatId, messageId, html, {
        parse_mode: 'HTML',
        link_preview_options: { is_disabled: true },
        ...(keyboard ? { reply_markup: keyboard } : {}),
      });
    } catch (err) {
      throw toSendError('editMessageText', err);
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
  if (err instanceof HttpError) return new TelegramNetworkError(method, err.message, mayHaveArrived(err.error));
  return err instanceof Error ? err : new Error(String(err));
}

/** System error codes of a connection never made: the request cannot have reached Telegram. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/**
 * Whether a request that got no answer may have been applied. An HTTP answer that is not the Bot API's JSON (a
 * gateway's 502 page) was answered by something in front of Telegram: not applied. A failed connection was never
 * sent. Anything else (grammY's timeout, a reset or hang-up after the request was written) may have been.
 */
function mayHaveArrived(cause: unknown): boolean {
  for (
    let e = cause, depth = 0;
    e && typeof e === 'object' && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if ('status' in e && 'statusText' in e) return false;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_CONNECTED.has(code)) return false;
  }
  return true;
}

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../http';
import { send } from './answer';
import { control, type EmulatorState } from './control';
import { chatId, linkPreviewOptions, MAX_ANSWER, messageText, readParams, replyMarkup } from './input';
import { ApiError, EMULATED_BOT, messageObject, type Query, type SentMessage, unixNow } from './objects';
import { type StoredFile, FileStore } from './files';
import { FloodControl, type RateLimits, TELEGRAM_LIMITS } from './rates';
import { Webhook } from './webhook';

export type { CallbackAnswer, InlineButton, SentMessage } from './objects';
export type { StoredFile };
export { TELEGRAM_LIMITS, type ChatStats, type RateLimits } from './rates';

/**
 * A Telegram Bot API server for the methods the bot uses (getMe,
 * sendMessage, editMessageText, editMessageReplyMarkup, answerCallbackQuery,
 * setWebhook, deleteWebhook, getFile and the file download: files.ts), with Telegram's answer shapes (`{ok, result}` /
 * `{ok:false, error_code, description, parameters?}`, @grammyjs/types
 * api.d.ts) and refusals, plus what Telegram does on its side: it delivers
 * Updates to the registered webhook with the secret header (webhook.ts).
 * The objects it answers with: objects.ts; checked against the typings by
 * test/unit/contracts/telegram-conformance.test.ts.
 *
 * What Telegram does that a bot must bear, learnt here too:
 * - Rates: 429 with `retry_after` (rates.ts).
 * - A webhook that does not answer 2xx within `webhookTimeoutMs` gets the
 *   same Update again (same update_id), up to `maxDeliveries` times.
 * - A callback query not answered within `callbackTtlMs` (about 15 s) is
 *   expired: answerCallbackQuery is refused with "query is too old".
 * - A group upgraded to a supergroup answers 400 with
 *   `parameters.migrate_to_chat_id`; the new chat announces the move with a
 *   `migrate_from_chat_id` service message.
 * - A press on a message the bot cannot reach carries an `InaccessibleMessage`
 *   (`date: 0`, nothing but the chat and the id).
 * - An edited message carries `edit_date`.
 *
 * Control API (for tests and people): control.ts.
 */

export interface TelegramEmulatorOptions {
  token: string;
  webhook?: { url: string; secret: string };
  /** How long a `timeout` fault holds the request before dropping the connection. */
  timeoutFaultMs?: number;
  /** Telegram's rates by default; `null`: none. */
  limits?: RateLimits | null;
  /** A webhook slower than this gets the Update again (default 10 s). */
  webhookTimeoutMs?: number;
  /** Pause before a re-delivery (default 1 s). */
  redeliverAfterMs?: number;
  /** Deliveries of one Update at most (default 3). */
  maxDeliveries?: number;
  /** A callback query unanswered this long is expired (default 15 s). */
  callbackTtlMs?: number;
}

export class TelegramEmulator implements EmulatorState {
  readonly messages: SentMessage[] = [];
  readonly me = EMULATED_BOT;
  readonly flood: FloodControl;
  readonly webhook: Webhook;
  readonly queries = new Map<string, Query>();
  /** Old group id → its supergroup. */
  readonly migrated = new Map<number, number>();
  /** Documents people sent, by file_id (files.ts). */
  readonly files = new FileStore();
  private readonly lastMessageId = new Map<number, number>();
  // Telegram never reuses an update_id; a restarted emulator must not either (the bot remembers them for days).
  private updateId = Math.floor(Date.now() / 1000) * 1000;
  private queryId = 1;
  private readonly server: http.Server;

  constructor(readonly opts: TelegramEmulatorOptions) {
    this.flood = new FloodControl(opts.limits === undefined ? TELEGRAM_LIMITS : opts.limits);
    this.webhook = new Webhook(
      {
        timeoutMs: opts.webhookTimeoutMs ?? 10_000,
        redeliverAfterMs: opts.redeliverAfterMs ?? 1000,
        maxDeliveries: opts.maxDeliveries ?? 3,
      },
      opts.webhook,
    );
    this.server = http.createServer((req, res) => void this.route(req, res));
  }

  /** Per chat and in all: sent, limited (429s), unhonoured (sends inside a retry_after). */
  get stats() {
    return this.flood.stats;
  }

  listen(port = 0): Promise<string> {
    return new Promise((resolve) =>
      this.server.listen(port, '127.0.0.1', () =>
        resolve(`http://127.0.0.1:${(this.server.address() as AddressInfo).port}`),
      ),
    );
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  nextUpdateId(): number {
    return ++this.updateId;
  }

  newQuery(): string {
    const id = String(this.queryId++);
    this.queries.set(id, { answered: false, pressedAt: Date.now() });
    return id;
  }

  /** Message ids count up per chat, whoever sent the message. */
  nextMessageId(chat: number): number {
    const id = (this.lastMessageId.get(chat) ?? 0) + 1;
    this.lastMessageId.set(chat, id);
    return id;
  }

  private async route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    try {
      const body = await readBody(req);
      const bot = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
      if (bot) return await this.api(bot[1], bot[2], readParams(url, body), res);
      const file = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
      if (file && req.method === 'GET') return this.files.serve(file[1] === this.opts.token, file[2], res);
      if (url.pathname.startsWith('/emulator/')) {
        const input = body ? (JSON.parse(body) as Record<string, unknown>) : {};
        return await control(this, req.method ?? 'GET', url, input, res);
      }
      send(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    } catch (err) {
      if (err instanceof ApiError)
        return send(res, err.status, {
          ok: false,
          error_code: err.status,
          description: err.description,
          ...(err.parameters ? { parameters: err.parameters } : {}),
        });
      send(res, 500, { ok: false, error_code: 500, description: `Internal Server Error: ${(err as Error).message}` });
    }
  }

  private async api(token: string, method: string, params: Record<string, unknown>, res: http.ServerResponse) {
    if (token !== this.opts.token) throw new ApiError(401, 'Unauthorized');
    const ok = (result: unknown) => send(res, 200, { ok: true, result });
    // Method names are case-insensitive (api.d.ts `ApiResponse`).
    switch (method.toLowerCase()) {
      case 'getme':
        return ok(this.me);
      case 'sendmessage': {
        const chat = chatId(params.chat_id);
        this.refuseMigrated(chat);
        if (await this.flood.beforeSend(chat)) return void res.destroy();
        const { text, entities } = messageText(params);
        const reply_markup = replyMarkup(params.reply_markup);
        const link_preview_options = linkPreviewOptions(params.link_preview_options);
        this.flood.accept(chat);
        const message: SentMessage = {
          chat_id: chat,
          message_id: this.nextMessageId(chat),
          html: String(params.text),
          text,
          entities,
          reply_markup,
          link_preview_options,
          date: unixNow(),
          edits: 0,
        };
        this.messages.push(message);
        return ok(messageObject(message));
      }
      case 'editmessagetext': {
        const message = this.find(params);
        const { text, entities } = messageText(params);
        const markup = replyMarkup(params.reply_markup);
        if (message.html === String(params.text) && JSON.stringify(message.reply_markup) === JSON.stringify(markup)) {
          throw new ApiError(
            400,
            'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
          );
        }
        const link_preview_options = linkPreviewOptions(params.link_preview_options);
        Object.assign(message, { html: String(params.text), text, entities, reply_markup: markup });
        if (link_preview_options) message.link_preview_options = link_preview_options;
        return ok(messageObject(this.edited(message)));
      }
      case 'editmessagereplymarkup': {
        const message = this.find(params);
        const markup = replyMarkup(params.reply_markup);
        if (JSON.stringify(message.reply_markup) === JSON.stringify(markup))
          throw new ApiError(400, 'Bad Request: message is not modified');
        message.reply_markup = markup;
        return ok(messageObject(this.edited(message)));
      }
      case 'answercallbackquery': {
        const query = this.queries.get(String(params.callback_query_id));
        const ttl = this.opts.callbackTtlMs ?? 15_000;
        if (!query || query.answered || Date.now() - query.pressedAt > ttl)
          throw new ApiError(400, 'Bad Request: query is too old and response timeout expired or query ID is invalid');
        if (params.text !== undefined && (typeof params.text !== 'string' || [...params.text].length > MAX_ANSWER))
          throw new ApiError(400, 'Bad Request: MESSAGE_TOO_LONG');
        query.answered = true;
        query.answeredAt = Date.now();
        query.answer = {
          ...(params.text !== undefined ? { text: String(params.text) } : {}),
          ...(params.show_alert ? { show_alert: true } : {}),
        };
        return ok(true);
      }
      case 'getfile':
        return ok(this.files.getFile(params.file_id));
      case 'setwebhook':
        this.webhook.set(params);
        return ok(true);
      case 'deletewebhook':
        this.webhook.registered = undefined;
        return ok(true);
      default:
        throw new ApiError(404, 'Not Found');
    }
  }

  /** message.d.ts `Message.edit_date`: the Unix time of the last edit. */
  private edited(message: SentMessage): SentMessage {
    message.edits += 1;
    message.edit_date = unixNow();
    return message;
  }

  refuseMigrated(chat: number): void {
    const to = this.migrated.get(chat);
    if (to !== undefined)
      throw new ApiError(400, 'Bad Request: group chat was upgraded to a supergroup chat', {
        migrate_to_chat_id: to,
      });
  }

  private find(params: Record<string, unknown>): SentMessage {
    const chat = chatId(params.chat_id);
    this.refuseMigrated(chat);
    const message = this.messages.find((m) => m.chat_id === chat && m.message_id === Number(params.message_id));
    if (!message) throw new ApiError(400, 'Bad Request: message to edit not found');
    return message;
  }
}

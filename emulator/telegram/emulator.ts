import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../http';
import { HtmlParseError, htmlToPlain } from './html';

/**
 * A Telegram Bot API server for the methods the bot uses, with Telegram's
 * answer shapes (`{ok, result}` / `{ok:false, error_code, description,
 * parameters?}`) and refusals, plus what Telegram does on its side: it
 * delivers Updates to the registered webhook with the secret header.
 *
 * What Telegram does that a bot must bear, learnt here too:
 * - Rates (bots FAQ): more than one message a second to a chat, 20 a minute
 *   to a group or 30 a second from the bot is answered 429 with
 *   `parameters.retry_after`; a chat sent to again before its retry_after is
 *   over is counted `unhonoured` (and refused again).
 * - A webhook that does not answer 2xx within `webhookTimeoutMs` gets the
 *   same Update again (same update_id), up to `maxDeliveries` times.
 * - A callback query not answered within `callbackTtlMs` (about 15 s) is
 *   expired: answerCallbackQuery is refused with "query is too old".
 * - A group upgraded to a supergroup answers 400 with
 *   `parameters.migrate_to_chat_id`; the new chat announces the move with a
 *   `migrate_from_chat_id` service message.
 *
 * Control API (for tests and people):
 *   GET    /emulator/messages?chat_id=   what the bot sent (with edits), oldest first
 *   POST   /emulator/press  {chat_id, user_id, message_id?, data, inaccessible?, language_code?}
 *            a button press → {status, deliveries, update_id, query_id, answer, answered_after_ms}; on a
 *            message the bot cannot reach (deleted, unknown, or `inaccessible: true`) an InaccessibleMessage
 *   DELETE /emulator/messages?chat_id=&message_id=        a person deletes the message
 *   POST   /emulator/type   {chat_id, user_id, text, language_code?}                a typed message → {status, deliveries, replies}
 *   PUT    /emulator/faults {chat_id, fault: "429"|"500"|"timeout", count, retry_after?}
 *   DELETE /emulator/faults
 *   PUT    /emulator/limits {chat_per_s?, group_per_min?, bot_per_s?} | {off: true}   the rates enforced
 *   PUT    /emulator/webhook {timeout_ms?, redeliver_after_ms?, max_deliveries?}      re-delivery
 *   POST   /emulator/migrate {chat_id, to?, announce?}   the group becomes a supergroup (default id -100<id>)
 *   DELETE /emulator/migrate?chat_id=                   undone (tests share one emulator)
 *   GET    /emulator/stats                               {sent, limited, unhonoured} per chat and in all
 *   GET    /emulator/webhook                                         the registered webhook (no secret)
 */

export interface InlineButton {
  text: string;
  callback_data?: string;
  url?: string;
}

export interface SentMessage {
  chat_id: number;
  message_id: number;
  html: string;
  text: string;
  reply_markup?: { inline_keyboard: InlineButton[][] };
  date: number;
  edits: number;
}

export interface CallbackAnswer {
  text?: string;
  show_alert?: boolean;
}

type Fault = { fault: '429'; retry_after: number } | { fault: '500' } | { fault: 'timeout'; ms: number };

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly description: string,
    readonly parameters?: Record<string, unknown>,
  ) {
    super(description);
  }
}

/** The rates enforced; `undefined` fields are not enforced. */
export interface RateLimits {
  chatPerSecond?: number;
  groupPerMinute?: number;
  botPerSecond?: number;
}

export const TELEGRAM_LIMITS: RateLimits = { chatPerSecond: 1, groupPerMinute: 20, botPerSecond: 30 };

export interface ChatStats {
  sent: number;
  /** 429s answered (rates and planned faults). */
  limited: number;
  /** Requests that came before the retry_after of a 429 was over. */
  unhonoured: number;
}

const MAX_TEXT = 4096;
const MAX_CALLBACK_BYTES = 64;
const MAX_ANSWER = 200;
const SECRET = /^[A-Za-z0-9_-]{1,256}$/;

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

/** Arrival jitter forgiven when judging rates and retry_after (loopback, a loaded machine). */
const TOLERANCE_MS = 25;

export class TelegramEmulator {
  readonly messages: SentMessage[] = [];
  private readonly nextMessageId = new Map<number, number>();
  private readonly queries = new Map<
    string,
    { answered: boolean; pressedAt: number; answeredAt?: number; answer?: CallbackAnswer }
  >();
  private readonly faults = new Map<number, Fault[]>();
  private limits: RateLimits | null;
  /** Accepted sends: per chat and for the bot, arrival times (the last minute's). */
  private readonly accepted = new Map<number, number[]>();
  private readonly botAccepted: number[] = [];
  private readonly penalty = new Map<number, number>();
  readonly stats = new Map<number, ChatStats>();
  /** Old group id → its supergroup. */
  private readonly migrated = new Map<number, number>();
  private delivery: { timeoutMs: number; redeliverAfterMs: number; maxDeliveries: number };
  private webhook?: { url: string; secret?: string; allowed_updates?: string[] };
  // Telegram never reuses an update_id; a restarted emulator must not either (the bot remembers them for days).
  private updateId = Math.floor(Date.now() / 1000) * 1000;
  private queryId = 1;
  private readonly server: http.Server;
  readonly me = {
    id: 7_000_000_001,
    is_bot: true,
    first_name: 'Downloads (emulator)',
    username: 'downloads_emulator_bot',
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
  };

  constructor(private readonly opts: TelegramEmulatorOptions) {
    if (opts.webhook) this.webhook = { url: opts.webhook.url, secret: opts.webhook.secret };
    this.limits = opts.limits === undefined ? TELEGRAM_LIMITS : opts.limits;
    this.delivery = {
      timeoutMs: opts.webhookTimeoutMs ?? 10_000,
      redeliverAfterMs: opts.redeliverAfterMs ?? 1000,
      maxDeliveries: opts.maxDeliveries ?? 3,
    };
    this.server = http.createServer((req, res) => void this.route(req, res));
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

  private async route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    try {
      const body = await readBody(req);
      const bot = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(url.pathname);
      if (bot) return await this.api(bot[1], bot[2], body, url, res);
      if (url.pathname.startsWith('/emulator/')) return await this.control(req.method ?? 'GET', url, body, res);
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

  private async api(token: string, method: string, body: string, url: URL, res: http.ServerResponse): Promise<void> {
    if (token !== this.opts.token) throw new ApiError(401, 'Unauthorized');
    let params: Record<string, unknown> = Object.fromEntries(url.searchParams);
    if (body) {
      try {
        params = { ...params, ...JSON.parse(body) };
      } catch {
        throw new ApiError(400, "Bad Request: can't parse JSON");
      }
    }
    const ok = (result: unknown) => send(res, 200, { ok: true, result });
    switch (method) {
      case 'getMe':
        return ok(this.me);
      case 'sendMessage': {
        const chatId = chat(params.chat_id);
        this.refuseMigrated(chatId);
        if (await this.fault(chatId, res)) return;
        const text = this.text(params);
        this.rate(chatId);
        const markup = replyMarkup(params.reply_markup);
        const id = (this.nextMessageId.get(chatId) ?? 0) + 1;
        this.nextMessageId.set(chatId, id);
        const message: SentMessage = {
          chat_id: chatId,
          message_id: id,
          html: String(params.text),
          text,
          reply_markup: markup,
          date: Math.floor(Date.now() / 1000),
          edits: 0,
        };
        this.messages.push(message);
        return ok(this.toMessage(message));
      }
      case 'editMessageText': {
        const message = this.find(params);
        const text = this.text(params);
        const markup = replyMarkup(params.reply_markup);
        if (message.html === String(params.text) && JSON.stringify(message.reply_markup) === JSON.stringify(markup)) {
          throw new ApiError(
            400,
            'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
          );
        }
        Object.assign(message, { html: String(params.text), text, reply_markup: markup, edits: message.edits + 1 });
        return ok(this.toMessage(message));
      }
      case 'editMessageReplyMarkup': {
        const message = this.find(params);
        const markup = replyMarkup(params.reply_markup);
        if (JSON.stringify(message.reply_markup) === JSON.stringify(markup))
          throw new ApiError(400, 'Bad Request: message is not modified');
        Object.assign(message, { reply_markup: markup, edits: message.edits + 1 });
        return ok(this.toMessage(message));
      }
      case 'answerCallbackQuery': {
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
      case 'setWebhook': {
        if (typeof params.url !== 'string' || params.url === '') {
          this.webhook = undefined;
          return ok(true);
        }
        if (!/^https?:\/\//.test(params.url))
          throw new ApiError(400, 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook');
        if (
          params.secret_token !== undefined &&
          (typeof params.secret_token !== 'string' || !SECRET.test(params.secret_token))
        ) {
          throw new ApiError(400, 'Bad Request: bad webhook: secret token contains unallowed characters');
        }
        this.webhook = {
          url: params.url,
          secret: params.secret_token as string | undefined,
          allowed_updates: params.allowed_updates as string[] | undefined,
        };
        return ok(true);
      }
      case 'deleteWebhook':
        this.webhook = undefined;
        return ok(true);
      default:
        throw new ApiError(404, 'Not Found');
    }
  }

  /** Applies the next planned fault of the chat; true when the request was answered (or dropped) by it. */
  private async fault(chatId: number, res: http.ServerResponse): Promise<boolean> {
    this.checkPenalty(chatId);
    const fault = this.faults.get(chatId)?.shift();
    if (!fault) return false;
    if (fault.fault === '429') this.tooMany(chatId, fault.retry_after);
    if (fault.fault === '500') throw new ApiError(500, 'Internal Server Error');
    await new Promise((r) => setTimeout(r, fault.ms));
    res.destroy();
    return true;
  }

  private statsOf(chatId: number): ChatStats {
    const stats = this.stats.get(chatId) ?? { sent: 0, limited: 0, unhonoured: 0 };
    this.stats.set(chatId, stats);
    return stats;
  }

  /** 429 with retry_after; the chat is penalised until it is over. */
  private tooMany(chatId: number, retryAfterS: number): never {
    this.penalty.set(chatId, Math.max(this.penalty.get(chatId) ?? 0, Date.now() + retryAfterS * 1000));
    this.statsOf(chatId).limited += 1;
    throw new ApiError(429, `Too Many Requests: retry after ${retryAfterS}`, { retry_after: retryAfterS });
  }

  /** A send inside a retry_after is a flood: counted, and refused with what is left of it. */
  private checkPenalty(chatId: number): void {
    const until = this.penalty.get(chatId) ?? 0;
    const now = Date.now();
    if (now >= until - TOLERANCE_MS) return;
    this.statsOf(chatId).unhonoured += 1;
    this.tooMany(chatId, Math.max(1, Math.ceil((until - now) / 1000)));
  }

  /** Telegram's rates over the accepted sends; the send is recorded when it passes. */
  private rate(chatId: number): void {
    const now = Date.now();
    const times = (this.accepted.get(chatId) ?? []).filter((t) => t > now - 60_000);
    this.accepted.set(chatId, times);
    while (this.botAccepted.length > 0 && this.botAccepted[0] <= now - 1000) this.botAccepted.shift();
    const limits = this.limits;
    if (limits) {
      const refuseUntil = (freeAt: number) => this.tooMany(chatId, Math.max(1, Math.ceil((freeAt - now) / 1000)));
      const within = (list: number[], windowMs: number) => list.filter((t) => t > now - windowMs + TOLERANCE_MS);
      if (limits.chatPerSecond) {
        const recent = within(times, 1000);
        if (recent.length >= limits.chatPerSecond) refuseUntil(recent[recent.length - limits.chatPerSecond] + 1000);
      }
      if (limits.groupPerMinute && chatId < 0) {
        const recent = within(times, 60_000);
        if (recent.length >= limits.groupPerMinute) refuseUntil(recent[recent.length - limits.groupPerMinute] + 60_000);
      }
      if (limits.botPerSecond) {
        const recent = within(this.botAccepted, 1000);
        if (recent.length >= limits.botPerSecond) refuseUntil(recent[recent.length - limits.botPerSecond] + 1000);
      }
    }
    times.push(now);
    this.botAccepted.push(now);
    this.statsOf(chatId).sent += 1;
  }

  private refuseMigrated(chatId: number): void {
    const to = this.migrated.get(chatId);
    if (to !== undefined)
      throw new ApiError(400, 'Bad Request: group chat was upgraded to a supergroup chat', {
        migrate_to_chat_id: to,
      });
  }

  private text(params: Record<string, unknown>): string {
    if (typeof params.text !== 'string' || params.text.length === 0)
      throw new ApiError(400, 'Bad Request: message text is empty');
    let text = params.text;
    if (params.parse_mode === 'HTML') {
      try {
        text = htmlToPlain(params.text);
      } catch (err) {
        if (err instanceof HtmlParseError) throw new ApiError(400, `Bad Request: ${err.message}`);
        throw err;
      }
    }
    if ([...text].length > MAX_TEXT) throw new ApiError(400, 'Bad Request: message is too long');
    return text;
  }

  private find(params: Record<string, unknown>): SentMessage {
    const chatId = chat(params.chat_id);
    this.refuseMigrated(chatId);
    const message = this.messages.find((m) => m.chat_id === chatId && m.message_id === Number(params.message_id));
    if (!message) throw new ApiError(400, 'Bad Request: message to edit not found');
    return message;
  }

  private toMessage(m: SentMessage) {
    return {
      message_id: m.message_id,
      date: m.date,
      chat: chatObject(m.chat_id),
      from: { id: this.me.id, is_bot: true, first_name: this.me.first_name, username: this.me.username },
      text: m.text,
      ...(m.reply_markup ? { reply_markup: m.reply_markup } : {}),
    };
  }

  private async control(method: string, url: URL, body: string, res: http.ServerResponse): Promise<void> {
    const input = body ? (JSON.parse(body) as Record<string, unknown>) : {};
    const path = url.pathname;
    if (method === 'GET' && path === '/emulator/messages') {
      const chatId = url.searchParams.get('chat_id');
      return send(res, 200, { messages: this.messages.filter((m) => chatId === null || m.chat_id === Number(chatId)) });
    }
    if (method === 'DELETE' && path === '/emulator/messages') {
      const chatId = chat(url.searchParams.get('chat_id'));
      const at = this.messages.findIndex(
        (m) => m.chat_id === chatId && m.message_id === Number(url.searchParams.get('message_id')),
      );
      if (at >= 0) this.messages.splice(at, 1);
      return send(res, 200, { deleted: at >= 0 });
    }
    if (method === 'GET' && path === '/emulator/webhook')
      return send(res, 200, { url: this.webhook?.url ?? '', has_secret: Boolean(this.webhook?.secret) });
    if (method === 'PUT' && path === '/emulator/faults') {
      const chatId = chat(input.chat_id);
      const count = Number(input.count ?? 1);
      const fault: Fault =
        input.fault === '429'
          ? { fault: '429', retry_after: Number(input.retry_after ?? 1) }
          : input.fault === 'timeout'
            ? { fault: 'timeout', ms: this.opts.timeoutFaultMs ?? 6000 }
            : { fault: '500' };
      this.faults.set(chatId, [...(this.faults.get(chatId) ?? []), ...Array.from({ length: count }, () => fault)]);
      return send(res, 200, { chat_id: chatId, planned: this.faults.get(chatId)!.length });
    }
    if (method === 'DELETE' && path === '/emulator/faults') {
      this.faults.clear();
      this.penalty.clear();
      return send(res, 200, { ok: true });
    }
    if (method === 'PUT' && path === '/emulator/limits') {
      const n = (v: unknown) => (v === undefined || v === null ? undefined : Number(v));
      this.limits = input.off
        ? null
        : {
            chatPerSecond: n(input.chat_per_s),
            groupPerMinute: n(input.group_per_min),
            botPerSecond: n(input.bot_per_s),
          };
      return send(res, 200, { limits: this.limits });
    }
    if (method === 'PUT' && path === '/emulator/webhook') {
      const n = (v: unknown, d: number) => (v === undefined ? d : Number(v));
      this.delivery = {
        timeoutMs: n(input.timeout_ms, this.delivery.timeoutMs),
        redeliverAfterMs: n(input.redeliver_after_ms, this.delivery.redeliverAfterMs),
        maxDeliveries: n(input.max_deliveries, this.delivery.maxDeliveries),
      };
      return send(res, 200, this.delivery);
    }
    if (method === 'GET' && path === '/emulator/stats') {
      const chats = Object.fromEntries(this.stats);
      const total = [...this.stats.values()].reduce(
        (a, b) => ({ sent: a.sent + b.sent, limited: a.limited + b.limited, unhonoured: a.unhonoured + b.unhonoured }),
        { sent: 0, limited: 0, unhonoured: 0 },
      );
      return send(res, 200, { ...total, chats });
    }
    if (method === 'DELETE' && path === '/emulator/migrate') {
      this.migrated.delete(chat(url.searchParams.get('chat_id')));
      return send(res, 200, { ok: true });
    }
    if (method === 'POST' && path === '/emulator/migrate') {
      const from = chat(input.chat_id);
      if (from >= 0) throw new ApiError(400, 'Bad Request: only a group can be upgraded');
      const to = input.to === undefined ? Number(`-100${Math.abs(from)}`) : chat(input.to);
      this.migrated.set(from, to);
      let status: number | undefined;
      if (input.announce !== false) {
        // As Telegram does: the new supergroup's first message names the group it came from.
        const update = {
          update_id: ++this.updateId,
          message: {
            message_id: (this.nextMessageId.get(to) ?? 0) + 1,
            date: Math.floor(Date.now() / 1000),
            chat: chatObject(to),
            from: user(input.user_id, input.language_code),
            migrate_from_chat_id: from,
          },
        };
        this.nextMessageId.set(to, update.message.message_id);
        status = (await this.deliver(update)).status;
      }
      return send(res, 200, { from, to, ...(status === undefined ? {} : { status }) });
    }
    if (method === 'POST' && path === '/emulator/press') {
      const chatId = chat(input.chat_id);
      const messageId = Number(input.message_id ?? 1);
      // A message the bot can no longer reach (deleted, or the test says so) arrives as an InaccessibleMessage.
      const stored = input.inaccessible
        ? undefined
        : this.messages.find((m) => m.chat_id === chatId && m.message_id === messageId);
      const id = String(this.queryId++);
      this.queries.set(id, { answered: false, pressedAt: Date.now() });
      const update = {
        update_id: ++this.updateId,
        callback_query: {
          id,
          from: user(input.user_id, input.language_code),
          chat_instance: String(chatId),
          message: stored ? this.toMessage(stored) : inaccessibleMessage(chatId, messageId),
          data: input.data,
        },
      };
      const { status, deliveries } = await this.deliver(update);
      const query = this.queries.get(id)!;
      return send(res, 200, {
        status,
        deliveries,
        update_id: update.update_id,
        query_id: id,
        answer: query.answer ?? null,
        answered_after_ms: query.answeredAt === undefined ? null : query.answeredAt - query.pressedAt,
      });
    }
    if (method === 'POST' && path === '/emulator/type') {
      const chatId = chat(input.chat_id);
      const text = String(input.text ?? '');
      const before = this.messages.length;
      const command = /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(text);
      const update = {
        update_id: ++this.updateId,
        message: {
          message_id: (this.nextMessageId.get(chatId) ?? 0) + 1,
          date: Math.floor(Date.now() / 1000),
          chat: chatObject(chatId),
          from: user(input.user_id, input.language_code),
          text,
          ...(command ? { entities: [{ type: 'bot_command', offset: 0, length: command[0].length }] } : {}),
        },
      };
      this.nextMessageId.set(chatId, update.message.message_id);
      const { status, deliveries } = await this.deliver(update);
      return send(res, 200, {
        status,
        deliveries,
        replies: this.messages.slice(before).filter((m) => m.chat_id === chatId),
      });
    }
    send(res, 404, { error: 'unknown emulator route' });
  }

  /**
   * As Telegram does: POST the Update to the webhook with the secret header;
   * no 2xx within the timeout (or an error) and the same Update goes again.
   */
  private async deliver(update: { update_id: number }): Promise<{ status: number; deliveries: number }> {
    if (!this.webhook) throw new ApiError(409, 'Conflict: no webhook is set (setWebhook first)');
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.webhook.secret) headers['X-Telegram-Bot-Api-Secret-Token'] = this.webhook.secret;
    const { timeoutMs, redeliverAfterMs, maxDeliveries } = this.delivery;
    for (let n = 1; ; n += 1) {
      let status: number;
      try {
        const answer = await fetch(this.webhook.url, {
          method: 'POST',
          headers,
          body: JSON.stringify(update),
          signal: AbortSignal.timeout(timeoutMs),
        });
        await answer.arrayBuffer();
        status = answer.status;
      } catch {
        status = 0; // no answer in time: the bot may still be working on it
      }
      if ((status >= 200 && status < 300) || n >= maxDeliveries) return { status, deliveries: n };
      await new Promise((r) => setTimeout(r, redeliverAfterMs));
    }
  }
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function chat(value: unknown): number {
  const id = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw new ApiError(400, 'Bad Request: chat not found');
  return id;
}

function chatObject(id: number) {
  if (id >= 0) return { id, type: 'private', first_name: `User ${id}` };
  return { id, type: String(id).startsWith('-100') ? 'supergroup' : 'group', title: `Group ${id}` };
}

/** @grammyjs/types message.d.ts `InaccessibleMessage`: the chat, the message id and `date: 0`, nothing else. */
function inaccessibleMessage(chatId: number, messageId: number) {
  return { chat: chatObject(chatId), message_id: messageId, date: 0 as const };
}

/** Bot API `User`: `language_code` (optional) is the IETF tag of the person's app language, when the test gives one. */
function user(value: unknown, languageCode?: unknown) {
  const id = Number(value ?? 1);
  return {
    id,
    is_bot: false,
    first_name: `User ${id}`,
    ...(typeof languageCode === 'string' ? { language_code: languageCode } : {}),
  };
}

function replyMarkup(value: unknown): SentMessage['reply_markup'] {
  if (value === undefined) return undefined;
  const markup = (typeof value === 'string' ? JSON.parse(value) : value) as { inline_keyboard?: unknown };
  if (!markup || !Array.isArray(markup.inline_keyboard))
    throw new ApiError(400, 'Bad Request: object expected as reply markup');
  for (const row of markup.inline_keyboard) {
    if (!Array.isArray(row))
      throw new ApiError(
        400,
        'Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays',
      );
    for (const button of row as InlineButton[]) {
      if (typeof button?.text !== 'string' || button.text === '')
        throw new ApiError(400, 'Bad Request: text buttons are unallowed in the inline keyboard');
      if (button.callback_data !== undefined) {
        const bytes = Buffer.byteLength(String(button.callback_data), 'utf8');
        if (bytes < 1 || bytes > MAX_CALLBACK_BYTES) throw new ApiError(400, 'Bad Request: BUTTON_DATA_INVALID');
      } else if (button.url === undefined) {
        throw new ApiError(
          400,
          "Bad Request: can't parse inline keyboard button: InlineKeyboardButton must have exactly one optional field",
        );
      }
    }
  }
  return markup as SentMessage['reply_markup'];
}

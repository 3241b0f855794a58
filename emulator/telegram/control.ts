import type http from 'node:http';
import { send } from './answer';
import { chatId } from './input';
import {
  ApiError,
  chatObject,
  inaccessibleMessage,
  messageObject,
  type Query,
  type SentMessage,
  unixNow,
  userObject,
} from './objects';
import type { FileStore } from './files';
import type { Fault, FloodControl } from './rates';
import type { Webhook } from './webhook';

/** What the control API reaches of the emulator (emulator.ts). */
export interface EmulatorState {
  readonly messages: SentMessage[];
  readonly opts: { timeoutFaultMs?: number };
  readonly flood: FloodControl;
  readonly webhook: Webhook;
  readonly queries: Map<string, Query>;
  readonly migrated: Map<number, number>;
  readonly files: FileStore;
  nextUpdateId(): number;
  newQuery(): string;
  nextMessageId(chat: number): number;
}

/**
 * The emulator's control API: what people do on Telegram's side (type,
 * press, delete a message, upgrade a group) and the faults tests plan.
 *
 *   GET    /emulator/messages?chat_id=   what the bot sent (with edits), oldest first
 *   DELETE /emulator/messages?chat_id=&message_id=        a person deletes the message
 *   POST   /emulator/press  {chat_id, user_id, message_id?, data, inaccessible?, language_code?}
 *            a button press → {status, deliveries, update_id, query_id, answer, answered_after_ms}; on a
 *            message the bot cannot reach (deleted, unknown, or `inaccessible: true`) an InaccessibleMessage
 *   POST   /emulator/type   {chat_id, user_id, text, entities?, language_code?}     a typed message → {status, deliveries, replies}
 *   POST   /emulator/document {chat_id, user_id, file_name, mime_type?, content_base64? | size?, declared_size?,
 *            chunked?, caption?, caption_entities?, language_code?}   a person sends a file (files.ts) → {status,
 *            deliveries, replies, file_id}; `size` alone: that many zero bytes; `declared_size`: the size the
 *            message and getFile report; `chunked`: served without Content-Length
 *   PUT    /emulator/faults {chat_id, fault: "429"|"500"|"timeout", count, retry_after?}
 *   DELETE /emulator/faults
 *   PUT    /emulator/limits {chat_per_s?, group_per_min?, bot_per_s?} | {off: true}   the rates enforced
 *   PUT    /emulator/webhook {timeout_ms?, redeliver_after_ms?, max_deliveries?}      re-delivery
 *   POST   /emulator/migrate {chat_id, to?, announce?}   the group becomes a supergroup (default id -100<id>)
 *   DELETE /emulator/migrate?chat_id=                   undone (tests share one emulator)
 *   GET    /emulator/stats                               {sent, limited, unhonoured} per chat and in all
 *   GET    /emulator/webhook                                         the registered webhook (no secret)
 *
 * The Updates it delivers are update.d.ts `Update`s: `message` (message.d.ts `Message`, with a
 * `bot_command` entity for a command) and `callback_query` (markup.d.ts `CallbackQuery`).
 */
export async function control(
  em: EmulatorState,
  method: string,
  url: URL,
  input: Record<string, unknown>,
  res: http.ServerResponse,
): Promise<void> {
  const route = `${method} ${url.pathname}`;
  const query = (name: string) => url.searchParams.get(name);
  switch (route) {
    case 'GET /emulator/messages': {
      const chat = query('chat_id');
      return send(res, 200, { messages: em.messages.filter((m) => chat === null || m.chat_id === Number(chat)) });
    }
    case 'DELETE /emulator/messages': {
      const chat = chatId(query('chat_id'));
      const at = em.messages.findIndex((m) => m.chat_id === chat && m.message_id === Number(query('message_id')));
      if (at >= 0) em.messages.splice(at, 1);
      return send(res, 200, { deleted: at >= 0 });
    }
    case 'GET /emulator/webhook':
      return send(res, 200, {
        url: em.webhook.registered?.url ?? '',
        has_secret: Boolean(em.webhook.registered?.secret),
      });
    case 'PUT /emulator/faults': {
      const chat = chatId(input.chat_id);
      const fault: Fault =
        input.fault === '429'
          ? { fault: '429', retry_after: Number(input.retry_after ?? 1) }
          : input.fault === 'timeout'
            ? { fault: 'timeout', ms: em.opts.timeoutFaultMs ?? 6000 }
            : { fault: '500' };
      return send(res, 200, { chat_id: chat, planned: em.flood.plan(chat, fault, Number(input.count ?? 1)) });
    }
    case 'DELETE /emulator/faults':
      em.flood.clear();
      return send(res, 200, { ok: true });
    case 'PUT /emulator/limits': {
      const n = (v: unknown) => (v === undefined || v === null ? undefined : Number(v));
      em.flood.limits = input.off
        ? null
        : {
            chatPerSecond: n(input.chat_per_s),
            groupPerMinute: n(input.group_per_min),
            botPerSecond: n(input.bot_per_s),
          };
      return send(res, 200, { limits: em.flood.limits });
    }
    case 'PUT /emulator/webhook': {
      const n = (v: unknown, d: number) => (v === undefined ? d : Number(v));
      const now = em.webhook.settings;
      em.webhook.settings = {
        timeoutMs: n(input.timeout_ms, now.timeoutMs),
        redeliverAfterMs: n(input.redeliver_after_ms, now.redeliverAfterMs),
        maxDeliveries: n(input.max_deliveries, now.maxDeliveries),
      };
      return send(res, 200, em.webhook.settings);
    }
    case 'GET /emulator/stats':
      return send(res, 200, em.flood.totals());
    case 'DELETE /emulator/migrate':
      em.migrated.delete(chatId(query('chat_id')));
      return send(res, 200, { ok: true });
    case 'POST /emulator/migrate':
      return send(res, 200, await migrate(em, input));
    case 'POST /emulator/press':
      return send(res, 200, await press(em, input));
    case 'POST /emulator/type':
      return send(res, 200, await type(em, input));
    case 'POST /emulator/document':
      return send(res, 200, await document(em, input));
    default:
      send(res, 404, { error: 'unknown emulator route' });
  }
}

/**
 * The group becomes a supergroup. As Telegram does, both chats get a service message (message.d.ts
 * `migrate_to_chat_id` in the old group, then `migrate_from_chat_id` in the new one); the status is the
 * webhook's answer to the second.
 */
async function migrate(em: EmulatorState, input: Record<string, unknown>) {
  const from = chatId(input.chat_id);
  if (from >= 0) throw new ApiError(400, 'Bad Request: only a group can be upgraded');
  const to = input.to === undefined ? Number(`-100${Math.abs(from)}`) : chatId(input.to);
  em.migrated.set(from, to);
  if (input.announce === false) return { from, to };
  await em.webhook.deliver(messageUpdate(em, from, input.user_id, { migrate_to_chat_id: to }));
  const announced = await em.webhook.deliver(messageUpdate(em, to, input.user_id, { migrate_from_chat_id: from }));
  return { from, to, status: announced.status };
}

/** A button press: the Update carries the message as the bot sent it, or an InaccessibleMessage. */
async function press(em: EmulatorState, input: Record<string, unknown>) {
  const chat = chatId(input.chat_id);
  const messageId = Number(input.message_id ?? 1);
  const stored = input.inaccessible
    ? undefined
    : em.messages.find((m) => m.chat_id === chat && m.message_id === messageId);
  const id = em.newQuery();
  const update = {
    update_id: em.nextUpdateId(),
    callback_query: {
      id,
      from: userObject(input.user_id, input.language_code),
      message: stored ? messageObject(stored) : inaccessibleMessage(chat, messageId),
      chat_instance: String(chat),
      data: input.data,
    },
  };
  const { status, deliveries } = await em.webhook.deliver(update);
  const query = em.queries.get(id)!;
  return {
    status,
    deliveries,
    update_id: update.update_id,
    query_id: id,
    answer: query.answer ?? null,
    answered_after_ms: query.answeredAt === undefined ? null : query.answeredAt - query.pressedAt,
  };
}

/** A typed message; a leading /command carries its `bot_command` entity as Telegram marks it. */
async function type(em: EmulatorState, input: Record<string, unknown>) {
  const chat = chatId(input.chat_id);
  const text = String(input.text ?? '');
  const before = em.messages.length;
  const command = /^\/[A-Za-z0-9_]+(@[A-Za-z0-9_]+)?/.exec(text);
  const entities = [
    ...(command ? [{ type: 'bot_command', offset: 0, length: command[0].length }] : []),
    ...(Array.isArray(input.entities) ? input.entities : []),
  ];
  const update = messageUpdate(em, chat, input.user_id, {
    from: userObject(input.user_id, input.language_code),
    text,
    ...(entities.length ? { entities } : {}),
  });
  const { status, deliveries } = await em.webhook.deliver(update);
  return { status, deliveries, replies: em.messages.slice(before).filter((m) => m.chat_id === chat) };
}

/** A person sends a file: message.d.ts `Message.document` (`Document`), with its caption when given. */
async function document(em: EmulatorState, input: Record<string, unknown>) {
  const chat = chatId(input.chat_id);
  const before = em.messages.length;
  const name = typeof input.file_name === 'string' ? input.file_name : undefined;
  const file = em.files.add({
    content: typeof input.content_base64 === 'string' ? Buffer.from(input.content_base64, 'base64') : undefined,
    size: input.size === undefined ? undefined : Number(input.size),
    declared: input.declared_size === undefined ? undefined : Number(input.declared_size),
    chunked: input.chunked === true,
    extension: name?.includes('.') ? name.slice(name.lastIndexOf('.') + 1) : undefined,
  });
  const update = messageUpdate(em, chat, input.user_id, {
    from: userObject(input.user_id, input.language_code),
    document: {
      file_id: file.file_id,
      file_unique_id: file.file_unique_id,
      ...(name !== undefined ? { file_name: name } : {}),
      ...(typeof input.mime_type === 'string' ? { mime_type: input.mime_type } : {}),
      file_size: file.declared,
    },
    ...(typeof input.caption === 'string' ? { caption: input.caption } : {}),
    ...(Array.isArray(input.caption_entities) ? { caption_entities: input.caption_entities } : {}),
  });
  const { status, deliveries } = await em.webhook.deliver(update);
  return {
    status,
    deliveries,
    file_id: file.file_id,
    replies: em.messages.slice(before).filter((m) => m.chat_id === chat),
  };
}

/** update.d.ts `Update` with a `message` from a person in the chat (message.d.ts `Message`). */
function messageUpdate(em: EmulatorState, chat: number, userId: unknown, fields: Record<string, unknown>) {
  return {
    update_id: em.nextUpdateId(),
    message: {
      message_id: em.nextMessageId(chat),
      from: userObject(userId),
      chat: chatObject(chat),
      date: unixNow(),
      ...fields,
    },
  };
}

/**
 * The Bot API objects the emulator answers with, field for field as the
 * official typings define them (`@grammyjs/types`, the .d.ts file named at
 * each): what is required is always there, what Telegram leaves out is left
 * out. test/unit/contracts/telegram-conformance.test.ts checks every answer
 * and Update against those typings.
 */

export interface InlineButton {
  text: string;
  callback_data?: string;
  url?: string;
}

/** A message the bot sent, as the emulator keeps it (`html` as sent, `text` as Telegram shows it). */
export interface SentMessage {
  chat_id: number;
  message_id: number;
  html: string;
  text: string;
  /** The formatting of `text` (@grammyjs/types message.d.ts `MessageEntity`), as Telegram derives it from the HTML. */
  entities?: MessageEntity[];
  reply_markup?: { inline_keyboard: InlineButton[][] };
  /** Set when the message was sent with link_preview_options (message.d.ts `Message.link_preview_options`). */
  link_preview_options?: Record<string, unknown>;
  date: number;
  /** Unix time of the last edit (message.d.ts `Message.edit_date`); absent until the first edit. */
  edit_date?: number;
  edits: number;
}

/** message.d.ts `MessageEntity`, the kinds the emulator produces. */
export interface MessageEntity {
  type: string;
  offset: number;
  length: number;
  url?: string;
  language?: string;
  custom_emoji_id?: string;
}

export interface CallbackAnswer {
  text?: string;
  show_alert?: boolean;
}

/** A callback query as Telegram tracks it: answered once, within its time. */
export interface Query {
  answered: boolean;
  pressedAt: number;
  answeredAt?: number;
  answer?: CallbackAnswer;
}

/** An error answer: `{ok: false, error_code, description, parameters?}` (api.d.ts `ApiError`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly description: string,
    /** api.d.ts `ResponseParameters`: `migrate_to_chat_id`, `retry_after`. */
    readonly parameters?: { migrate_to_chat_id?: number; retry_after?: number },
  ) {
    super(description);
  }
}

/**
 * getMe's answer: manage.d.ts `UserFromGetMe` (a `User` with `is_bot: true`, a username and the
 * capabilities Telegram reports only in getMe, all required but `supports_guest_queries`).
 */
export const EMULATED_BOT = {
  id: 7_000_000_001,
  is_bot: true,
  first_name: 'Downloads (emulator)',
  username: 'downloads_emulator_bot',
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
  can_connect_to_business: false,
  has_main_web_app: false,
  has_topics_enabled: false,
  allows_users_to_create_topics: false,
  can_manage_bots: false,
  supports_join_request_queries: false,
} as const;

/** manage.d.ts `User`: the bot as the sender of its messages (the getMe-only fields are not repeated). */
export const botAsSender = () => ({
  id: EMULATED_BOT.id,
  is_bot: true,
  first_name: EMULATED_BOT.first_name,
  username: EMULATED_BOT.username,
});

/** manage.d.ts `Chat`: `Chat.PrivateChat` (first_name, no title), `GroupChat` / `SupergroupChat` (title). */
export function chatObject(id: number) {
  if (id >= 0) return { id, type: 'private', first_name: `User ${id}` };
  return { id, type: String(id).startsWith('-100') ? 'supergroup' : 'group', title: `Group ${id}` };
}

/** manage.d.ts `User`: a person pressing or typing; `language_code` (optional) is the IETF tag of their app's language. */
export function userObject(value: unknown, languageCode?: unknown) {
  const id = Number(value ?? 1);
  return {
    id,
    is_bot: false,
    first_name: `User ${id}`,
    ...(typeof languageCode === 'string' ? { language_code: languageCode } : {}),
  };
}

/**
 * message.d.ts `Message` of a text message the bot sent: `text` with its `entities`, the
 * keyboard, `link_preview_options` when they were given, and `edit_date` once edited.
 */
export function messageObject(m: SentMessage) {
  return {
    message_id: m.message_id,
    from: botAsSender(),
    chat: chatObject(m.chat_id),
    date: m.date,
    ...(m.edit_date !== undefined ? { edit_date: m.edit_date } : {}),
    text: m.text,
    ...(m.entities && m.entities.length > 0 ? { entities: m.entities } : {}),
    ...(m.link_preview_options ? { link_preview_options: m.link_preview_options } : {}),
    ...(m.reply_markup ? { reply_markup: m.reply_markup } : {}),
  };
}

/**
 * message.d.ts `InaccessibleMessage`: what a callback query carries for a message the bot can no
 * longer reach (deleted, or otherwise out of reach): the chat, the message id and `date: 0`, nothing else.
 */
export function inaccessibleMessage(chatId: number, messageId: number) {
  return { chat: chatObject(chatId), message_id: messageId, date: 0 as const };
}

/** The Unix time Telegram stamps on messages and edits. */
export const unixNow = () => Math.floor(Date.now() / 1000);

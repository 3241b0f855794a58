import type { CallbackAnswer, SentMessage } from '../../emulator/telegram/emulator';

/** The stack's Telegram emulator through its control API, and the chats the stack configured. */

export const chats = () => (process.env.TELEGRAM_CHAT_IDS ?? '').split(',').map(Number);
export const ALLOWED_USER = () => Number((process.env.TELEGRAM_ALLOWED_USER_IDS ?? '').split(',')[0]);

const base = () => process.env.TELEGRAM_API_ROOT!;

async function control<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base()}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await res.json()) as T;
}

export async function messages(chatId?: number): Promise<SentMessage[]> {
  return (
    await control<{ messages: SentMessage[] }>(
      'GET',
      `/emulator/messages${chatId === undefined ? '' : `?chat_id=${chatId}`}`,
    )
  ).messages;
}

/** Messages about one download (its id is in every text and button). */
export async function messagesAbout(id: string, chatId?: number): Promise<SentMessage[]> {
  return (await messages(chatId)).filter((m) => m.text.includes(id));
}

export interface PressResult {
  status: number;
  /** How many times the emulator delivered the Update (re-delivered when the webhook was slow). */
  deliveries: number;
  update_id: number;
  answer: CallbackAnswer | null;
  /** From the press to answerCallbackQuery. */
  answered_after_ms: number | null;
}

export const press = (
  chatId: number,
  userId: number,
  data: string,
  messageId?: number,
  inaccessible = false,
  languageCode?: string,
) =>
  control<PressResult>('POST', '/emulator/press', {
    chat_id: chatId,
    user_id: userId,
    data,
    message_id: messageId,
    inaccessible,
    language_code: languageCode,
  });

/** A person deletes a message: a press on it then carries an InaccessibleMessage. */
export const deleteMessage = (chatId: number, messageId: number) =>
  control('DELETE', `/emulator/messages?chat_id=${chatId}&message_id=${messageId}`);

/** A person types in a chat; `languageCode` is their Telegram app's language (User.language_code). */
export const type = (chatId: number, userId: number, text: string, languageCode?: string, entities?: unknown[]) =>
  control<{ status: number; deliveries: number; replies: SentMessage[] }>('POST', '/emulator/type', {
    chat_id: chatId,
    user_id: userId,
    text,
    language_code: languageCode,
    entities,
  });

export interface DocumentOptions {
  fileName?: string;
  mimeType?: string;
  /** The bytes; or `size` zero bytes. */
  content?: Buffer;
  size?: number;
  /** The size the message and getFile report (a lie when it differs). */
  declaredSize?: number;
  /** Served without Content-Length. */
  chunked?: boolean;
  caption?: string;
  languageCode?: string;
}

/** A person sends a file to the chat (the emulator's POST /emulator/document). */
export const sendDocument = (chatId: number, userId: number, opts: DocumentOptions) =>
  control<{ status: number; deliveries: number; file_id: string; replies: SentMessage[] }>(
    'POST',
    '/emulator/document',
    {
      chat_id: chatId,
      user_id: userId,
      file_name: opts.fileName ?? 'file.torrent',
      mime_type: opts.mimeType,
      content_base64: opts.content?.toString('base64'),
      size: opts.size,
      declared_size: opts.declaredSize,
      chunked: opts.chunked,
      caption: opts.caption,
      language_code: opts.languageCode,
    },
  );

export const fault = (chatId: number, f: '429' | '500' | 'timeout', count: number, retryAfter?: number) =>
  control('PUT', '/emulator/faults', { chat_id: chatId, fault: f, count, retry_after: retryAfter });

export const clearFaults = () => control('DELETE', '/emulator/faults');

/** The emulator's re-delivery of a slow webhook (its defaults: 10 s, 1 s, 3). */
export const webhookDelivery = (timeoutMs: number, redeliverAfterMs: number, maxDeliveries: number) =>
  control('PUT', '/emulator/webhook', {
    timeout_ms: timeoutMs,
    redeliver_after_ms: redeliverAfterMs,
    max_deliveries: maxDeliveries,
  });

export const migrate = (chatId: number, announce: boolean) =>
  control<{ from: number; to: number }>('POST', '/emulator/migrate', { chat_id: chatId, announce });

export const unmigrate = (chatId: number) => control('DELETE', `/emulator/migrate?chat_id=${chatId}`);

export const emulatorStats = () =>
  control<{ sent: number; limited: number; unhonoured: number }>('GET', '/emulator/stats');

/** The torrent client emulator takes this long to add a torrent (0: at once). */
export const slowTorrentClient = (ms: number) =>
  fetch(`${process.env.TORRENT_CLIENT_URL}/emulator/faults`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ add_delay_ms: ms }),
  });

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

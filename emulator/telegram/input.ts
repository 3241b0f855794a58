import { HtmlParseError, parseHtml } from './html';
import { ApiError, type InlineButton, type MessageEntity, type SentMessage } from './objects';

/**
 * A method's parameters read as Telegram reads them, and refused with its
 * words: chat ids, the text (4,096 characters after the HTML is parsed), the
 * inline keyboard (`callback_data` 1–64 bytes), answer texts (200 characters).
 */

const MAX_TEXT = 4096;
const MAX_CALLBACK_BYTES = 64;
export const MAX_ANSWER = 200;

/** The query string and the JSON body, as grammY sends them (methods.d.ts `ApiMethods` parameters). */
export function readParams(url: URL, body: string): Record<string, unknown> {
  const params: Record<string, unknown> = Object.fromEntries(url.searchParams);
  if (!body) return params;
  try {
    return { ...params, ...JSON.parse(body) };
  } catch {
    throw new ApiError(400, "Bad Request: can't parse JSON");
  }
}

export function chatId(value: unknown): number {
  const id = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw new ApiError(400, 'Bad Request: chat not found');
  return id;
}

/** The text as shown and its entities; an empty, unparsable or too long text is refused. */
export function messageText(params: Record<string, unknown>): { text: string; entities: MessageEntity[] } {
  if (typeof params.text !== 'string' || params.text.length === 0)
    throw new ApiError(400, 'Bad Request: message text is empty');
  let parsed: { text: string; entities: MessageEntity[] } = { text: params.text, entities: [] };
  if (params.parse_mode === 'HTML') {
    try {
      parsed = parseHtml(params.text);
    } catch (err) {
      if (err instanceof HtmlParseError) throw new ApiError(400, `Bad Request: ${err.message}`);
      throw err;
    }
  }
  if ([...parsed.text].length > MAX_TEXT) throw new ApiError(400, 'Bad Request: message is too long');
  return parsed;
}

/** link_preview_options as given (methods.d.ts), kept on the message as Telegram does when they were set. */
export function linkPreviewOptions(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  const options = typeof value === 'string' ? JSON.parse(value) : value;
  if (!options || typeof options !== 'object' || Array.isArray(options))
    throw new ApiError(400, 'Bad Request: object expected as link preview options');
  return options as Record<string, unknown>;
}

export function replyMarkup(value: unknown): SentMessage['reply_markup'] {
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

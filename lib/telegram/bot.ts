import { Bot, Context } from 'grammy';
import type { UserFromGetMe } from 'grammy/types';
import { ActiveExistsError, DownloadNotFoundError, InvalidTransitionError } from '../downloads/errors';
import { Download, isActive } from '../downloads/model';
import { changeState, DownloadsDeps, getDownload, listDownloads, retry } from '../downloads/service';
import { InvalidIdError, parseId } from '../ident';
import type { Logger } from '../log';
import { TorrentClientError } from '../torrents/errors';
import { grammyClientConfig, TelegramClientOptions } from './api';
import { ButtonAction, parseCallback, StaleButtonError } from './callback';
import { cardText, cardUrl, escapeHtml, keyboard, notifiedOf } from './format';

/**
 * The bot's answers to Updates (grammY). Buttons and commands run the same
 * lib/downloads use cases as the HTTP API; ids are parsed before any store
 * call; every button press is answered (answerCallbackQuery), a stale one
 * with "Button expired" and no change.
 */

export interface BotDeps {
  client: TelegramClientOptions;
  downloads: DownloadsDeps;
  access: { chats: ReadonlySet<number>; users: ReadonlySet<number> };
  uiBase: string;
  log: Logger;
  /** Skips getMe when known (tests); otherwise init() asks Telegram once per container. */
  botInfo?: UserFromGetMe;
}

export const EXPIRED = 'Button expired.';
export const REFUSAL = 'Sorry, this bot only serves the chats it was set up for.';
const FIND_LIMIT = 10;
const MAX_QUERY_CHARS = 100;

export const HELP = [
  '<b>Downloads bot</b>',
  '/find &lt;name or hash prefix&gt; — the newest matching downloads',
  '/get &lt;id&gt; — one download, with its buttons',
  '/help — this text',
  'Notifications arrive here; their buttons retry, cancel or refresh a download.',
].join('\n');

export function createBot(deps: BotDeps): Bot {
  const bot = new Bot(deps.client.token, {
    client: grammyClientConfig(deps.client),
    ...(deps.botInfo ? { botInfo: deps.botInfo } : {}),
  });

  // Only configured chats and users are served; others are refused politely and logged by id only.
  bot.use(async (ctx, next) => {
    const chatId = ctx.chat?.id;
    const userId = ctx.from?.id;
    if (
      (chatId !== undefined && deps.access.chats.has(chatId)) ||
      (userId !== undefined && deps.access.users.has(userId))
    )
      return next();
    deps.log.warn('telegram_refused', { update_id: ctx.update.update_id, chat_id: chatId, user_id: userId });
    if (ctx.callbackQuery) await ctx.answerCallbackQuery({ text: REFUSAL });
    else if (ctx.message && chatId !== undefined) await ctx.reply(REFUSAL);
  });

  bot.command(['help', 'start'], (ctx) => ctx.reply(HELP, { parse_mode: 'HTML' }));
  bot.command('find', async (ctx) => {
    const q = ctx.match.trim();
    if (q === '' || q.length > MAX_QUERY_CHARS)
      return void (await ctx.reply(`Usage: /find &lt;name or hash prefix&gt; (1–${MAX_QUERY_CHARS} characters)`, {
        parse_mode: 'HTML',
      }));
    const page = await listDownloads(deps.downloads, { q, limit: FIND_LIMIT });
    if (page.items.length === 0)
      return void (await ctx.reply(`No download matches <code>${escapeHtml(q)}</code>.`, { parse_mode: 'HTML' }));
    const lines = page.items.map(
      (d) =>
        `<code>${d.id}</code> ${d.state} <a href="${escapeHtml(cardUrl(deps.uiBase, d.id))}">${escapeHtml(d.name)}</a>`,
    );
    await ctx.reply(lines.join('\n'), { parse_mode: 'HTML', link_preview_options: { is_disabled: true } });
  });
  bot.command('get', async (ctx) => {
    let id: string;
    try {
      id = parseId(ctx.match.trim());
    } catch {
      return void (await ctx.reply('Usage: /get &lt;id&gt; (a download id, 26 characters)', { parse_mode: 'HTML' }));
    }
    const download = await deps.downloads.store.get(id);
    if (!download) return void (await ctx.reply('No download with that id.'));
    await ctx.reply(cardText(notifiedOf(download), deps.uiBase), {
      parse_mode: 'HTML',
      reply_markup: keyboard(id),
      link_preview_options: { is_disabled: true },
    });
  });

  bot.on('callback_query:data', (ctx) => press(deps, ctx, ctx.callbackQuery.data));
  // A press without data (a game button, a forged update) is stale too: answered, nothing done.
  bot.on('callback_query', (ctx) => ctx.answerCallbackQuery({ text: EXPIRED }));

  bot.catch((err) => deps.log.error('telegram_update_failed', { update_id: err.ctx.update.update_id, err: err.error }));
  return bot;
}

async function press(deps: BotDeps, ctx: Context, data: string): Promise<void> {
  let action: ButtonAction;
  let id: string;
  try {
    ({ action, id } = parseCallback(data));
  } catch (err) {
    deps.log.info('telegram_button_stale', { update_id: ctx.update.update_id, reason: (err as Error).message });
    await ctx.answerCallbackQuery({ text: EXPIRED });
    return;
  }
  const log = deps.log.child({ download_id: id, action, chat_id: ctx.chat?.id, user_id: ctx.from?.id });
  let download: Download;
  let answer: string;
  try {
    ({ download, answer } = await act(deps, action, id));
  } catch (err) {
    const text = refusal(err);
    (text ? log.info : log.error)('telegram_button_refused', { err });
    await ctx.answerCallbackQuery({ text: text ?? 'Something went wrong; nothing was changed.' });
    return;
  }
  log.info('telegram_button_done', { state: download.state });
  await ctx.answerCallbackQuery({ text: answer });
  // The message shows the state the press led to; an unchanged text is not an error.
  if (ctx.callbackQuery?.message) {
    await ctx
      .editMessageText(cardText(notifiedOf(download), deps.uiBase, answer), {
        parse_mode: 'HTML',
        reply_markup: keyboard(id),
        link_preview_options: { is_disabled: true },
      })
      .catch((err) => {
        if (!/message is not modified/.test(String((err as Error).message))) log.warn('telegram_edit_failed', { err });
      });
  }
}

async function act(deps: BotDeps, action: ButtonAction, id: string): Promise<{ download: Download; answer: string }> {
  switch (action) {
    case 'retry':
      return { download: await retry(deps.downloads, id), answer: 'Retry started.' };
    case 'cancel': {
      const current = await getDownload(deps.downloads, id);
      if (!isActive(current.state))
        throw new InvalidTransitionError(id, current.state, 'cancelled', 'only an active download can be cancelled');
      return { download: await changeState(deps.downloads, id, 'cancelled'), answer: 'Cancelled.' };
    }
    case 'open':
      return { download: await getDownload(deps.downloads, id), answer: 'Refreshed.' };
  }
}

/** The answer to a refused press; undefined for a failure that is ours (logged as an error). */
function refusal(err: unknown): string | undefined {
  if (err instanceof StaleButtonError || err instanceof InvalidIdError || err instanceof DownloadNotFoundError)
    return EXPIRED;
  if (err instanceof InvalidTransitionError) return `Button expired: the download is ${err.current} now.`;
  if (err instanceof ActiveExistsError) return `Refused: download ${err.ownerId} is already active for this torrent.`;
  if (err instanceof TorrentClientError) return 'The torrent client refused; nothing was changed. Try again later.';
  return undefined;
}

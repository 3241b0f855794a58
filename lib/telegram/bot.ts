import { Bot, Context } from 'grammy';
import { Clock, systemClock } from '../clock';
import type { UserFromGetMe } from 'grammy/types';
import type { DownloadState } from '../downloads/model';
import { DownloadsDeps, listDownloads } from '../downloads/service';
import { parseId } from '../ident';
import type { Logger } from '../log';
import { addFromMessage, addsSomething } from './add';
import { grammyClientConfig, TelegramClientOptions } from './api';
import { ButtonAction, parseCallback } from './callback';
import { UpdateInProgressError, UpdateNotClaimedError } from './errors';
import { FileLinks } from './files';
import type { Lang } from '../i18n';
import { BotLocale, botLocale, cardText, cardUrl, clip, escapeHtml, fitLines, keyboard, notifiedOf } from './format';
import { press, PressDeps } from './press';
import { chatLanguage, parseLangArgument } from './language';
import type { BotMessages } from './messages';
import { EN } from './messages-en';
import { ChatLanguages, ChatMoves, servedChats, UpdateClaim, UpdateLedger } from './store';

/**
 * The bot's answers to Updates (grammY). Buttons and commands run the same
 * lib/downloads use cases as the HTTP API; ids are parsed before any store
 * call.
 *
 * - Once: an Update is handled by one delivery (`UpdateLedger`, keyed by
 *   update_id, a lease until the handling finishes). Telegram delivers it
 *   again when the webhook answers late (a slow qBittorrent behind a Retry),
 *   and Retry must not run twice; a delivery whose handling died is handled
 *   again (decision 356).
 * - A press reads its download first (a parse and one read fit in Telegram's
 *   answer window), is answered with the truth ("Button expired.", "Already
 *   cancelled.", "Retrying…") before its action runs, so the spinner stops at
 *   once whatever the action costs; then the action, and its outcome is
 *   written into the message (editMessageText), or sent as a new message when
 *   the bot can no longer reach that one (an `InaccessibleMessage`, `date: 0`,
 *   or an edit Telegram refuses; decision 305).
 * - Served: the configured chats, the chats they moved to (a group that
 *   became a supergroup), and the configured users anywhere. Retry and Cancel
 *   only for the configured users (`TELEGRAM_ALLOWED_USER_IDS`), wherever they
 *   press: both checks come before any write, the update record included.
 * - Spoken in the chat's language (/lang, stored per chat; decision 340), else
 *   UI_LANGUAGE, else the person's Telegram language, else English; times in
 *   UI_TIME_ZONE. A stranger is refused in their own language without a read.
 */

export interface BotDeps extends PressDeps {
  client: TelegramClientOptions;
  downloads: DownloadsDeps;
  access: { chats: readonly number[]; users: ReadonlySet<number> };
  updates: UpdateLedger;
  moves: ChatMoves;
  languages: ChatLanguages;
  /** The deployment's fixed language (UI_LANGUAGE), if any, and the zone times are shown in. */
  locale: { language?: Lang; timeZone: string };
  now?: Clock;
  uiBase: string;
  log: Logger;
  /** Skips getMe when known (tests); otherwise init() asks Telegram once per container. */
  botInfo?: UserFromGetMe;
  /** How long a handling holds its Update (default `UPDATE_LEASE_MS`). */
  updateLeaseMs?: number;
  /** The fetch of a document's bytes (tests); the global one by default. */
  fetchFile?: typeof fetch;
}

/**
 * No handling outlives the webhook's invocation (its timeout, 10 s in serverless.yml), and Telegram delivers an
 * unanswered Update again only after waiting for the answer: by then the lease of a dead handling is over.
 */
export const UPDATE_LEASE_MS = 10_000;

/** The English texts by name (the catalogue is lib/telegram/messages.ts). */
export const EXPIRED = EN.expired;
export const PENDING = EN.pending;
export const BUSY = EN.busy;
export const ALREADY_CANCELLED = EN.alreadyCancelled;
export const expiredAt = (state: DownloadState) => EN.expiredAt(state);
export const REFUSAL = EN.refusal;
export const NOT_ALLOWED = EN.notAllowed;
export const HELP = EN.help;
/** Button actions that write; `open` only reads. */
const CHANGING_ACTIONS: ReadonlySet<ButtonAction> = new Set<ButtonAction>(['retry', 'cancel']);
/** Commands that write, and when: `/lang ru` sets the chat's language; a bare `/lang` only reads. */
const CHANGING_COMMANDS: Readonly<Record<string, (argument: string) => boolean>> = {
  lang: (argument) => argument.trim() !== '',
};
const FIND_LIMIT = 10;
/** A name in a /find line; ten of them and the rest of their lines stay under Telegram's 4,096 characters. */
const FIND_NAME_CHARS = 300;
const MAX_QUERY_CHARS = 100;

export function createBot(deps: BotDeps): Bot {
  // A document's link is under the root grammY calls (files.ts): its URL builder tells us which.
  const links = new FileLinks(deps.client.apiRoot);
  const bot = new Bot(deps.client.token, {
    client: { ...grammyClientConfig(deps.client), buildUrl: links.buildUrl },
    ...(deps.botInfo ? { botInfo: deps.botInfo } : {}),
  });

  const now = deps.now ?? systemClock;
  const configured = new Set(deps.access.chats);
  // One read of the chat's choice per Update, whoever asks for it first.
  const spoken = new WeakMap<Context, Promise<{ chosen?: Lang; lang: Lang; locale: BotLocale }>>();
  const speechOf = (ctx: Context) => {
    let found = spoken.get(ctx);
    if (!found) {
      const chat = ctx.chat?.id;
      // An unreadable choice is no choice: the Update is still answered, in the default language.
      const read = chat === undefined ? Promise.resolve(undefined) : deps.languages.languageOf(chat);
      found = read
        .catch((err: unknown) => {
          deps.log.warn('telegram_language_unreadable', { update_id: ctx.update.update_id, chat_id: chat, err });
          return undefined;
        })
        .then((chosen) => {
          const lang = chatLanguage({ chosen, fixed: deps.locale.language, languageCode: ctx.from?.language_code });
          return { chosen, lang, locale: botLocale(lang, deps.locale.timeZone) };
        });
      spoken.set(ctx, found);
    }
    return found;
  };
  const localeOf = async (ctx: Context): Promise<BotLocale> => (await speechOf(ctx)).locale;
  const messagesOf = async (ctx: Context): Promise<BotMessages> => (await localeOf(ctx)).messages;

  // The service message of a group's upgrade, in the new supergroup: the move is recorded when the old chat was served.
  bot.use(async (ctx, next) => {
    const from = ctx.message?.migrate_from_chat_id;
    const to = ctx.chat?.id;
    if (from !== undefined && to !== undefined && Number.isSafeInteger(from)) {
      const moves = await deps.moves.moves();
      if (servedChats(deps.access.chats, moves).has(from) && moves.get(from) !== to) {
        await deps.moves.recordMove(from, to, now());
        deps.log.warn('telegram_chat_migrated', {
          from_chat_id: from,
          to_chat_id: to,
          update_id: ctx.update.update_id,
        });
      }
    }
    return next();
  });

  // Only served chats and users are served; others are refused politely and logged by id only.
  bot.use(async (ctx, next) => {
    const chatId = ctx.chat?.id;
    const userId = ctx.from?.id;
    if (
      (chatId !== undefined && configured.has(chatId)) ||
      (userId !== undefined && deps.access.users.has(userId)) ||
      // Only a chat not configured costs a read: the chats configured ones moved to.
      (chatId !== undefined && servedChats(deps.access.chats, await deps.moves.moves()).has(chatId))
    )
      return next();
    deps.log.warn('telegram_refused', { update_id: ctx.update.update_id, chat_id: chatId, user_id: userId });
    // A stranger costs no read: their own app's language (or the fixed one), never a chat's choice.
    const refusal = botLocale(
      chatLanguage({ fixed: deps.locale.language, languageCode: ctx.from?.language_code }),
      deps.locale.timeZone,
    ).messages.refusal;
    if (ctx.callbackQuery) await ctx.answerCallbackQuery({ text: refusal });
    else if (ctx.message && chatId !== undefined) await ctx.reply(refusal);
  });

  // What changes a download is for the configured people only, wherever they press (a group's other members
  // may read, never retry or cancel); checked before any write, the update record included (decision 291).
  bot.use(async (ctx, next) => {
    const userId = ctx.from?.id;
    if (!changesSomething(ctx) || (userId !== undefined && deps.access.users.has(userId))) return next();
    deps.log.warn('telegram_refused_person', {
      update_id: ctx.update.update_id,
      chat_id: ctx.chat?.id,
      user_id: userId,
    });
    const m = await messagesOf(ctx);
    const text = addsSomething(ctx.message ?? ctx.channelPost) ? m.add.notAllowed : m.notAllowed;
    if (ctx.callbackQuery) await ctx.answerCallbackQuery({ text });
    else if (ctx.msg && ctx.chat) await ctx.reply(text);
  });

  // A re-delivered Update (same update_id) that was handled already does nothing: nothing runs twice. One whose
  // handling never finished (the invocation timed out, the store paused) is handled again once its lease is over;
  // the actions are idempotent (a second Retry or Cancel finds the state changed). Only updates let through above
  // are recorded: a refused stranger writes nothing.
  bot.use(async (ctx, next) => {
    const updateId = ctx.update.update_id;
    let claim: UpdateClaim;
    try {
      claim = await deps.updates.begin(updateId, now(), now() + (deps.updateLeaseMs ?? UPDATE_LEASE_MS));
    } catch (err) {
      // Nothing ran. Telegram delivers it again (503): a claim that landed anyway holds only its lease, then the
      // update is handled, once. Answering "try again" instead lost the press (the soak, decision 358).
      throw new UpdateNotClaimedError(updateId, err);
    }
    if (claim === 'done') return void deps.log.info('telegram_update_redelivered', { update_id: updateId });
    // Telegram is answered an error and delivers it again later, when the lease is over if that handling died.
    if (claim === 'busy') throw new UpdateInProgressError(updateId);
    try {
      await next();
    } catch (err) {
      await deps.updates
        .abandon(updateId)
        .catch((abandonErr) => deps.log.error('telegram_update_unrecorded', { update_id: updateId, err: abandonErr }));
      throw err;
    }
    // Not recorded: a redelivery after the lease handles it again, and the idempotent actions do nothing twice.
    await deps.updates
      .finish(updateId, now())
      .catch((err) => deps.log.error('telegram_update_unrecorded', { update_id: updateId, err }));
  });

  bot.command(['help', 'start'], async (ctx) => ctx.reply((await messagesOf(ctx)).help, { parse_mode: 'HTML' }));
  bot.command('find', async (ctx) => {
    const m = await messagesOf(ctx);
    const q = ctx.match.trim();
    if (q === '' || q.length > MAX_QUERY_CHARS)
      return void (await ctx.reply(m.findUsage(MAX_QUERY_CHARS), { parse_mode: 'HTML' }));
    const page = await listDownloads(deps.downloads, { q, limit: FIND_LIMIT });
    if (page.items.length === 0) return void (await ctx.reply(m.findNone(q), { parse_mode: 'HTML' }));
    const lines = page.items.map(
      (d) =>
        `<code>${d.id}</code> ${m.states[d.state]} <a href="${escapeHtml(cardUrl(deps.uiBase, d.id))}">${escapeHtml(clip(d.name, FIND_NAME_CHARS))}</a>`,
    );
    await ctx.reply(fitLines(lines, m), { parse_mode: 'HTML', link_preview_options: { is_disabled: true } });
  });
  bot.command('get', async (ctx) => {
    const locale = await localeOf(ctx);
    let id: string;
    try {
      id = parseId(ctx.match.trim());
    } catch {
      return void (await ctx.reply(locale.messages.getUsage, { parse_mode: 'HTML' }));
    }
    const download = await deps.downloads.store.get(id);
    if (!download) return void (await ctx.reply(locale.messages.getNone));
    await ctx.reply(cardText(notifiedOf(download), deps.uiBase, locale), {
      parse_mode: 'HTML',
      reply_markup: keyboard(id, locale.messages),
      link_preview_options: { is_disabled: true },
    });
  });
  bot.command('lang', async (ctx) => {
    const chat = ctx.chat.id;
    if (ctx.match.trim() === '') {
      const { chosen, lang, locale } = await speechOf(ctx);
      const m = locale.messages;
      return void (await ctx.reply(m.langNow(m.languageNames[lang], chosen !== undefined)));
    }
    const lang = parseLangArgument(ctx.match);
    if (!lang) return void (await ctx.reply((await messagesOf(ctx)).langUsage));
    await deps.languages.setLanguage(chat, lang, ctx.from?.id, now());
    deps.log.info('telegram_language_set', { update_id: ctx.update.update_id, chat_id: chat, lang });
    // The answer is already in the language chosen.
    const m = botLocale(lang, deps.locale.timeZone).messages;
    await ctx.reply(m.langSet(m.languageNames[lang]));
  });

  // A magnet or a .torrent (add.ts); any other message is not for the bot and gets no answer.
  const adding = {
    downloads: deps.downloads,
    uiBase: deps.uiBase,
    log: deps.log,
    files: { token: deps.client.token, links, timeoutMs: deps.client.timeoutMs, fetch: deps.fetchFile },
  };
  bot.on('message', async (ctx) => addFromMessage(adding, ctx, await localeOf(ctx)));

  bot.on('callback_query:data', async (ctx) => press(deps, ctx, ctx.callbackQuery.data, await localeOf(ctx)));
  // A press without data (a game button, a forged update) is stale too: answered, nothing done.
  bot.on('callback_query', async (ctx) => ctx.answerCallbackQuery({ text: (await messagesOf(ctx)).expired }));

  bot.catch((err) => deps.log.error('telegram_update_failed', { update_id: err.ctx.update.update_id, err: err.error }));
  return bot;
}

/** Whether the Update asks for a write: a Retry or Cancel press, or a command listed as changing. */
function changesSomething(ctx: Context): boolean {
  const data = ctx.callbackQuery?.data;
  if (data !== undefined) {
    try {
      return CHANGING_ACTIONS.has(parseCallback(data).action);
    } catch {
      return false; // a stale button is answered "expired" and changes nothing
    }
  }
  // A magnet or a .torrent adds (an edit of a message adds nothing: only `message` is handled, add.ts).
  if (addsSomething(ctx.message ?? ctx.channelPost)) return true;
  // ctx.msg: a message, a channel post, or an edit of either; a channel post has no person (`from`), so a command
  // that writes, posted in a configured channel, is refused like a stranger's.
  const [, name, argument] = /^\/([A-Za-z0-9_]+)(?:@\S+)?(.*)$/s.exec(ctx.msg?.text ?? '') ?? [];
  const key = name?.toLowerCase();
  return key !== undefined && Object.hasOwn(CHANGING_COMMANDS, key) && CHANGING_COMMANDS[key](argument ?? '');
}

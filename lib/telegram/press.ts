import { Context, GrammyError } from 'grammy';
import { ActiveExistsError, DownloadNotFoundError, InvalidTransitionError } from '../downloads/errors';
import { Download, isActive } from '../downloads/model';
import { changeState, getDownload, keepWaiting, retry, RETRYABLE } from '../downloads/service';
import { InvalidIdError } from '../ident';
import type { Logger } from '../log';
import { audit, AUDIT_EVENTS, telegramPrincipal } from '../log/audit';
import { TorrentClientError } from '../torrents/errors';
import type { DownloadsDeps } from '../downloads/service';
import { ButtonAction, parseCallback } from './callback';
import { StaleButtonError } from './errors';
import { BotLocale, cardText, escapeHtml, keyboard, notifiedOf } from './format';
import { BotMessages } from './messages';

/**
 * A button press (Retry, Cancel, Open, Keep waiting): its download read first so the answer tells the truth and stops the
 * spinner at once, then the action, then the outcome written into the message (or sent anew when the bot can no
 * longer reach it; decision 305). The bot's middlewares (lib/telegram/bot.ts) ran before: served, allowed, once.
 */
/** What a press needs of the bot's dependencies (BotDeps extends it). */
export interface PressDeps {
  downloads: DownloadsDeps;
  uiBase: string;
  log: Logger;
}

export async function press(deps: PressDeps, ctx: Context, data: string, locale: BotLocale): Promise<void> {
  const m = locale.messages;
  let action: ButtonAction;
  let id: string;
  try {
    ({ action, id } = parseCallback(data));
  } catch (err) {
    deps.log.info('telegram_button_stale', { update_id: ctx.update.update_id, reason: (err as Error).message });
    await ctx.answerCallbackQuery({ text: m.expired });
    return;
  }
  const log = deps.log.child({ download_id: id, action, chat_id: ctx.chat?.id, user_id: ctx.from?.id });
  // What the press needs is read first, so the answer tells the truth; the action (qBittorrent) comes after it.
  let current: Download | undefined;
  try {
    current = await deps.downloads.store.get(id);
  } catch (err) {
    log.error('telegram_button_read_failed', { update_id: ctx.update.update_id, err });
    return answer(ctx, log, m.busy);
  }
  const refused = refusedByState(m, action, current);
  await answer(ctx, log, refused ?? m.pending[action]);
  if (refused !== undefined) {
    log.info('telegram_button_refused', { state: current?.state ?? null });
    // The answer said it all; a download that still exists gets its card refreshed (a read, nothing written).
    if (current) await showOutcome(deps, ctx, log, locale, id, current, refused);
    return;
  }
  let download: Download | undefined;
  let note: string;
  try {
    download = await act(deps, action, id);
    note = m.done[action];
    log.info('telegram_button_done', { state: download.state });
    if (action === 'cancel')
      audit(
        log,
        AUDIT_EVENTS.downloadCancelled,
        { principal: telegramPrincipal(ctx.from?.id), via: 'telegram' },
        { update_id: ctx.update.update_id },
      );
  } catch (err) {
    // Changed between the read and the action (another press, the poll): said in the message.
    const text = refusal(m, err);
    (text ? log.info : log.error)('telegram_button_refused', { err });
    note = text ?? m.failedOurs;
    download = await deps.downloads.store.get(id).catch(() => undefined);
  }
  await showOutcome(deps, ctx, log, locale, id, download, note);
}

/** The answer a press gets from what was read, when it cannot go ahead; undefined when it can. */
function refusedByState(m: BotMessages, action: ButtonAction, download: Download | undefined): string | undefined {
  if (!download) return m.expired;
  if (action === 'cancel' && download.state === 'cancelled') return m.alreadyCancelled;
  if (action === 'cancel' && !isActive(download.state)) return m.expiredAt(download.state);
  if (action === 'retry' && !RETRYABLE.includes(download.state)) return m.expiredAt(download.state);
  if (action === 'keep' && !isActive(download.state)) return m.expiredAt(download.state);
  // Answered already (another press, the web's button) or it moved: the clock is not restarted again.
  if (action === 'keep' && !download.warning) return m.notWarned;
  return undefined;
}

/** Answers the press; an answer Telegram refuses (too late) is logged, and the outcome still follows. */
async function answer(ctx: Context, log: Logger, text: string): Promise<void> {
  await ctx
    .answerCallbackQuery({ text })
    .catch((err) => log.warn('telegram_answer_failed', { update_id: ctx.update.update_id, err }));
}

/**
 * The message shows the state the press led to and its outcome; an unchanged text is not an error. A message
 * the bot can no longer reach (`InaccessibleMessage`, `date: 0`) is never edited: the card goes to the chat as
 * a new message, as it does when Telegram refuses the edit (deleted since, too old). Decision 305.
 */
async function showOutcome(
  deps: PressDeps,
  ctx: Context,
  log: Logger,
  locale: BotLocale,
  id: string,
  download: Download | undefined,
  note: string,
): Promise<void> {
  const message = ctx.callbackQuery?.message;
  const card = download ? cardText(notifiedOf(download), deps.uiBase, locale, note) : undefined;
  const options = { parse_mode: 'HTML', link_preview_options: { is_disabled: true } } as const;
  try {
    if (card !== undefined && message && message.date !== 0) {
      try {
        await ctx.editMessageText(card, { ...options, reply_markup: keyboard(id, locale.messages) });
        return;
      } catch (err) {
        if (/message is not modified/.test(String((err as Error).message))) return;
        // Only Telegram's refusal of the edit is sent anew; a lost answer may have edited it (no duplicate).
        if (!(err instanceof GrammyError && err.error_code === 400)) throw err;
        log.warn('telegram_edit_refused', { err });
      }
    }
    if (!ctx.chat) return;
    if (card !== undefined) await ctx.reply(card, { ...options, reply_markup: keyboard(id, locale.messages) });
    else await ctx.reply(escapeHtml(note), { parse_mode: 'HTML' });
  } catch (err) {
    log.warn('telegram_edit_failed', { err });
  }
}

async function act(deps: PressDeps, action: ButtonAction, id: string): Promise<Download> {
  switch (action) {
    case 'retry':
      return retry(deps.downloads, id);
    case 'cancel': {
      const current = await getDownload(deps.downloads, id);
      if (!isActive(current.state))
        throw new InvalidTransitionError(id, current.state, 'cancelled', 'only an active download can be cancelled');
      return changeState(deps.downloads, id, 'cancelled');
    }
    case 'open':
      return getDownload(deps.downloads, id);
    case 'keep':
      // The store's keepWaiting is conditioned on the warning (a CAS): two presses at once restart the clock once.
      return keepWaiting(deps.downloads, id);
  }
}

/** The answer to a refused press; undefined for a failure that is ours (logged as an error). */
function refusal(m: BotMessages, err: unknown): string | undefined {
  if (err instanceof StaleButtonError || err instanceof InvalidIdError || err instanceof DownloadNotFoundError)
    return m.expired;
  if (err instanceof InvalidTransitionError) return m.expiredAt(err.current);
  if (err instanceof ActiveExistsError) return m.activeExists(err.ownerId);
  if (err instanceof TorrentClientError) return m.clientRefused;
  return undefined;
}

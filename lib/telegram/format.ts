import { type Download, transferFields } from '../downloads/model';
import { createFormat, type Catalogs, type Format, type Lang } from '../i18n';
import { isActive } from '../downloads/model';
import { ButtonAction, encodeCallback } from './callback';
import { escapeHtml } from './html';
import type { BotMessages } from './messages';
import { EN } from './messages-en';
import { RU } from './messages-ru';
import { EventKind, needsReview, NotifiedDownload } from './model';

export { escapeHtml } from './html';

/**
 * Message texts (parse_mode HTML) and keyboards, in one place, in the
 * language and time zone of the chat they go to (`BotLocale`). Every value
 * that comes from outside (names, reasons) is escaped (./html.ts) and
 * clipped; a text is kept within Telegram's 4,096 characters (fitLines).
 */

/** What a chat is spoken to in: its language's messages, and dates in its language and the configured zone. */
export interface BotLocale {
  messages: BotMessages;
  format: Format;
}

export const BOT_MESSAGES: Catalogs<BotMessages> = { en: EN, ru: RU };

export function botLocale(lang: Lang, timeZone: string): BotLocale {
  return { messages: BOT_MESSAGES[lang], format: createFormat(lang, timeZone) };
}

export const MAX_MESSAGE_CHARS = 4096;
const MAX_NAME_CHARS = 200;
const MAX_REASON_CHARS = 500;

export interface InlineKeyboard {
  inline_keyboard: Array<Array<{ text: string; callback_data: string }>>;
}

export function reviewUrl(uiBase: string, id: string): string {
  return new URL(`review/${id}`, withSlash(uiBase)).toString();
}

export function cardUrl(uiBase: string, id: string): string {
  return new URL(`download/${id}`, withSlash(uiBase)).toString();
}

export function notificationText(kind: EventKind, d: NotifiedDownload, uiBase: string, locale: BotLocale): string {
  const m = locale.messages;
  const link = needsReview(kind)
    ? `<a href="${escapeHtml(reviewUrl(uiBase, d.id))}">${m.reviewLink}</a>`
    : `<a href="${escapeHtml(cardUrl(uiBase, d.id))}">${m.openLink}</a>`;
  return fitLines([`<b>${m.titles[kind]}</b>: ${escapeHtml(clip(d.name))}`, ...detailLines(d, locale), link], m);
}

/** The text of a message after a button moved the download (or Open refreshed it). */
export function cardText(d: NotifiedDownload, uiBase: string, locale: BotLocale, note?: string): string {
  const m = locale.messages;
  const link =
    d.reviewReason || d.state === 'failed' || d.state === 'stuck'
      ? `<a href="${escapeHtml(reviewUrl(uiBase, d.id))}">${m.reviewLink}</a>`
      : `<a href="${escapeHtml(cardUrl(uiBase, d.id))}">${m.openLink}</a>`;
  return fitLines(
    [
      `<b>${escapeHtml(clip(d.name))}</b>`,
      ...detailLines(d, locale),
      ...(note ? [`<i>${escapeHtml(clip(note, MAX_REASON_CHARS))}</i>`] : []),
      link,
    ],
    m,
  );
}

function detailLines(d: NotifiedDownload, { messages: m, format }: BotLocale): string[] {
  return [
    m.stateLine(d.state),
    ...transferLines(d, { messages: m, format }),
    ...(d.firstHash ? [m.hashLine(d.firstHash)] : []),
    ...(d.reviewReason ? [m.reviewLine(clip(d.reviewReason, MAX_REASON_CHARS))] : []),
    m.idLine(d.id),
    ...(d.changedAt !== undefined ? [m.changedLine(format.dateTime(d.changedAt), format.zone(d.changedAt))] : []),
  ];
}

/**
 * The progress and the client's figures (lib/downloads/transfer.ts), each only when known: sizes, speeds and
 * the time left in the chat's language; the speeds and the time left only while it is active.
 */
function transferLines(d: NotifiedDownload, { messages: m, format: f }: BotLocale): string[] {
  const x = d.transfer ?? {};
  const active = isActive(d.state);
  const percent =
    d.progress === undefined
      ? undefined
      : new Intl.NumberFormat(f.locale, { style: 'percent', maximumFractionDigits: 1 }).format(
          Math.floor(d.progress * 1000) / 1000,
        );
  const done =
    x.size_bytes !== undefined
      ? m.sizeLine({
          percent,
          downloaded: x.downloaded_bytes === undefined ? undefined : f.bytes(x.downloaded_bytes),
          size: f.bytes(x.size_bytes),
        })
      : percent !== undefined
        ? m.sizeLine({ percent })
        : undefined;
  const speeds =
    active && (x.dl_speed !== undefined || x.up_speed !== undefined)
      ? m.speedLine({
          down: f.speed(x.dl_speed ?? 0),
          up: f.speed(x.up_speed ?? 0),
          eta: d.state === 'downloading' ? (x.eta_s !== undefined ? f.seconds(x.eta_s) : m.etaUnknown) : undefined,
        })
      : undefined;
  const peers =
    x.seeds !== undefined || x.peers !== undefined || x.ratio !== undefined
      ? m.peersLine({
          seeds: f.number(x.seeds ?? 0),
          peers: f.number(x.peers ?? 0),
          ratio:
            x.ratio === undefined
              ? undefined
              : new Intl.NumberFormat(f.locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(x.ratio),
        })
      : undefined;
  return [
    ...(done ? [done] : []),
    ...(speeds ? [speeds] : []),
    ...(peers ? [peers] : []),
    ...(d.warning && active ? [m.warningLine(d.warning)] : []),
  ];
}

/** A download's status message (decision 456): its opening title, then its card as it is now. */
export function statusText(title: StatusTitle, d: NotifiedDownload, uiBase: string, locale: BotLocale): string {
  const m = locale.messages;
  const link = `<a href="${escapeHtml(cardUrl(uiBase, d.id))}">${m.openLink}</a>`;
  return fitLines(
    [
      `<b>${title === 'status' ? m.statusTitle : m.titles[title]}</b>: ${escapeHtml(clip(d.name))}`,
      ...detailLines(d, locale),
      link,
    ],
    m,
  );
}

/** What a status message says it is: the event that opened it, or a status opened by a later change. */
export type StatusTitle = 'created' | 'adopted' | 'status';

/** The usual buttons (Retry, Cancel, Open); a timeout warning's message: Keep waiting and Cancel (decision 457). */
export const USUAL_BUTTONS: readonly ButtonAction[] = ['retry', 'cancel', 'open'];
export const WARNING_BUTTONS: readonly ButtonAction[] = ['keep', 'cancel'];

/** The buttons, labelled in the chat's language; their callback_data is the same in every language. */
export function keyboard(id: string, m: BotMessages, actions: readonly ButtonAction[] = USUAL_BUTTONS): InlineKeyboard {
  return {
    inline_keyboard: [
      actions.map((action) => ({ text: m.buttons[action], callback_data: encodeCallback(action, id) })),
    ],
  };
}

/** An outside value shortened to `max` characters, the cut shown by "…". */
export function clip(text: string, max = MAX_NAME_CHARS): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * What Telegram counts against its 4,096 characters: the text after the HTML
 * entities are parsed (tags gone, `&lt;` one character), in UTF-16 units
 * (an emoji counts two, as in Telegram's entity offsets).
 */
export function visibleLength(html: string): number {
  return html.replace(/<[^>]*>/g, '').replace(/&(?:lt|gt|amp|quot|#\d+|#x[0-9a-f]+);/gi, '_').length;
}

/**
 * Lines of HTML (each one whole: its tags open and close in it) joined into
 * one message within `max` visible characters; when they do not fit, whole
 * lines are dropped from the end and a visible mark says how many.
 */
export function fitLines(lines: string[], m: BotMessages, max = MAX_MESSAGE_CHARS): string {
  const shortenedMark = (dropped: number) => m.shortened(dropped, max);
  const whole = lines.join('\n');
  if (visibleLength(whole) <= max) return whole;
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    const mark = shortenedMark(lines.length - kept.length - 1);
    const cost = visibleLength(line) + (kept.length > 0 ? 1 : 0);
    if (used + cost + 1 + visibleLength(mark) > max) break;
    kept.push(line);
    used += cost;
  }
  if (kept.length === 0) {
    // Not even one line fits (cannot happen with our clipped values): its text alone, cut.
    const plain = lines[0].replace(/<[^>]*>/g, '');
    return `${plain.slice(0, max - 200).replace(/&[^;]*$/, '')}…\n${shortenedMark(lines.length - 1)}`;
  }
  return `${kept.join('\n')}\n${shortenedMark(lines.length - kept.length)}`;
}

function withSlash(base: string): string {
  return base.endsWith('/') ? base : `${base}/`;
}

/** What a message shows of a download. */
export function notifiedOf(d: Download & { review_reason?: string }): NotifiedDownload {
  const changedAt = Date.parse(d.updated_at);
  const transfer = transferFields(d);
  return {
    ...(d.progress !== undefined ? { progress: d.progress } : {}),
    ...(Object.keys(transfer).length > 0 ? { transfer } : {}),
    ...(d.warning ? { warning: d.warning } : {}),
    id: d.id,
    name: d.name,
    state: d.state,
    firstHash: d.infohashes[0]?.infohash,
    reviewReason: d.review_reason,
    ...(Number.isFinite(changedAt) ? { changedAt } : {}),
  };
}

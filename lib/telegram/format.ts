import type { Download, DownloadState } from '../downloads/model';
import { encodeCallback } from './callback';
import { EventKind, needsReview, NotifiedDownload } from './model';

/**
 * Message texts (parse_mode HTML) and keyboards, in one place. Every value
 * that comes from outside (names, reasons) goes through escapeHtml: a name
 * like `<b>` must show as text, and an unescaped `<` makes Telegram refuse
 * the whole message (400 can't parse entities).
 */

export const MAX_MESSAGE_CHARS = 4096;
const MAX_NAME_CHARS = 200;
const MAX_REASON_CHARS = 500;

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

export interface InlineKeyboard {
  inline_keyboard: Array<Array<{ text: string; callback_data: string }>>;
}

export function reviewUrl(uiBase: string, id: string): string {
  return new URL(`review/${id}`, withSlash(uiBase)).toString();
}

export function cardUrl(uiBase: string, id: string): string {
  return new URL(`download/${id}`, withSlash(uiBase)).toString();
}

const TITLES: Record<EventKind, string> = {
  created: 'New download',
  adopted: 'Adopted from the client',
  completed: 'Completed',
  failed: 'Failed',
  stuck: 'Stuck',
  resurrected: 'Active again',
  needs_review: 'Needs review',
};

export function notificationText(kind: EventKind, d: NotifiedDownload, uiBase: string): string {
  const link = needsReview(kind)
    ? `<a href="${escapeHtml(reviewUrl(uiBase, d.id))}">Review</a>`
    : `<a href="${escapeHtml(cardUrl(uiBase, d.id))}">Open</a>`;
  return fitLines([`<b>${TITLES[kind]}</b>: ${escapeHtml(clip(d.name))}`, ...detailLines(d), link]);
}

/** The text of a message after a button moved the download (or Open refreshed it). */
export function cardText(d: NotifiedDownload, uiBase: string, note?: string): string {
  const link =
    d.reviewReason || d.state === 'failed' || d.state === 'stuck'
      ? `<a href="${escapeHtml(reviewUrl(uiBase, d.id))}">Review</a>`
      : `<a href="${escapeHtml(cardUrl(uiBase, d.id))}">Open</a>`;
  return fitLines([
    `<b>${escapeHtml(clip(d.name))}</b>`,
    ...detailLines(d),
    ...(note ? [`<i>${escapeHtml(clip(note, MAX_REASON_CHARS))}</i>`] : []),
    link,
  ]);
}

function detailLines(d: NotifiedDownload): string[] {
  return [
    `state: <b>${stateLabel(d.state)}</b>`,
    ...(d.firstHash ? [`hash: <code>${escapeHtml(d.firstHash)}</code>`] : []),
    ...(d.reviewReason ? [`review: ${escapeHtml(clip(d.reviewReason, MAX_REASON_CHARS))}`] : []),
    `id: <code>${d.id}</code>`,
  ];
}

export function keyboard(id: string): InlineKeyboard {
  return {
    inline_keyboard: [
      [
        { text: 'Retry', callback_data: encodeCallback('retry', id) },
        { text: 'Cancel', callback_data: encodeCallback('cancel', id) },
        { text: 'Open', callback_data: encodeCallback('open', id) },
      ],
    ],
  };
}

function stateLabel(state: DownloadState): string {
  return state;
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
export function fitLines(lines: string[], max = MAX_MESSAGE_CHARS): string {
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

function shortenedMark(dropped: number): string {
  return `<i>… shortened: ${dropped} more line${dropped === 1 ? '' : 's'} not shown (Telegram allows ${MAX_MESSAGE_CHARS} characters)</i>`;
}

function withSlash(base: string): string {
  return base.endsWith('/') ? base : `${base}/`;
}

/** What a message shows of a download. */
export function notifiedOf(d: Download & { review_reason?: string }): NotifiedDownload {
  return {
    id: d.id,
    name: d.name,
    state: d.state,
    firstHash: d.infohashes[0]?.infohash,
    reviewReason: d.review_reason,
  };
}

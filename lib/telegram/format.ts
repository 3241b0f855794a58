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
  const lines = [`<b>${TITLES[kind]}</b>: ${escapeHtml(clip(d.name))}`, ...detailLines(d), link];
  return lines.join('\n');
}

/** The text of a message after a button moved the download (or Open refreshed it). */
export function cardText(d: NotifiedDownload, uiBase: string, note?: string): string {
  const link =
    d.reviewReason || d.state === 'failed' || d.state === 'stuck'
      ? `<a href="${escapeHtml(reviewUrl(uiBase, d.id))}">Review</a>`
      : `<a href="${escapeHtml(cardUrl(uiBase, d.id))}">Open</a>`;
  return [
    `<b>${escapeHtml(clip(d.name))}</b>`,
    ...detailLines(d),
    ...(note ? [`<i>${escapeHtml(note)}</i>`] : []),
    link,
  ].join('\n');
}

function detailLines(d: NotifiedDownload): string[] {
  return [
    `state: <b>${stateLabel(d.state)}</b>`,
    ...(d.firstHash ? [`hash: <code>${escapeHtml(d.firstHash)}</code>`] : []),
    ...(d.reviewReason ? [`review: ${escapeHtml(d.reviewReason)}`] : []),
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

function clip(text: string): string {
  return text.length > MAX_NAME_CHARS ? `${text.slice(0, MAX_NAME_CHARS - 1)}…` : text;
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

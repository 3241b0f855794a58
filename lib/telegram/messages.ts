import type { DownloadState, FailureReason } from '../downloads/model';
import { type Lang, LOCALES } from '../i18n';
import type { ButtonAction } from './callback';
import type { EventKind } from './model';

/**
 * Everything the bot says, one catalogue per language (messages-en.ts,
 * messages-ru.ts; BOT_MESSAGES in format.ts; lib/i18n's shape: a
 * language missing a message, or having one the other lacks, is a type
 * error). Each message is whole: a text, or a function of its values that
 * builds the whole sentence, plurals by Intl.PluralRules (`plural`). Texts
 * are Telegram HTML; a function escapes what it is given (escapeHtml), so
 * outside values (names, queries) never become markup.
 */
export interface BotMessages {
  /** The /help text (HTML). */
  help: string;
  findUsage: (maxChars: number) => string;
  findNone: (query: string) => string;
  getUsage: string;
  getNone: string;
  /** A press that cannot be read, or on a download that is gone. */
  expired: string;
  /** The immediate answer of a press that goes ahead. */
  pending: Record<ButtonAction, string>;
  /** The outcome written into the message after the action. */
  done: Record<ButtonAction, string>;
  /** Keep waiting on a download without a warning (answered already, or it moved). */
  notWarned: string;
  busy: string;
  alreadyCancelled: string;
  /** A press whose download moved on since its message was sent. */
  expiredAt: (state: DownloadState) => string;
  /** Another download holds the torrent. */
  activeExists: (ownerId: string) => string;
  clientRefused: string;
  failedOurs: string;
  refusal: string;
  notAllowed: string;
  /** What a magnet or a .torrent sent to the bot came to (lib/telegram/add.ts). */
  add: AddMessages;
  /** Notification titles, by event. */
  titles: Record<EventKind, string>;
  buttons: Record<ButtonAction, string>;
  /** A download's state as a person reads it. */
  states: Record<DownloadState, string>;
  /** The lines of a card (HTML: the value already marked up by the caller where it is a code). */
  stateLine: (state: DownloadState) => string;
  hashLine: (hash: string) => string;
  reviewLine: (reason: string) => string;
  idLine: (id: string) => string;
  changedLine: (when: string, zone: string) => string;
  /** The client's figures (lib/downloads/transfer.ts), already formatted in the chat's language. */
  sizeLine: (p: { percent?: string; downloaded?: string; size?: string }) => string;
  speedLine: (p: { down: string; up: string; eta?: string }) => string;
  peersLine: (p: { seeds: string; peers: string; ratio?: string }) => string;
  etaUnknown: string;
  /** A timeout warning stands (decision 457). */
  warningLine: (reason: FailureReason) => string;
  /** The title of a status message a later change opened (one opened by its event has the event's title). */
  statusTitle: string;
  /** The link of a card that needs a look, and of one that does not. */
  reviewLink: string;
  openLink: string;
  /** The last line of a text Telegram's 4,096 characters cut. */
  shortened: (dropped: number, max: number) => string;
  /** /lang: the chat's language now, a change, and its usage. */
  langNow: (name: string, chosen: boolean) => string;
  langSet: (name: string) => string;
  langUsage: string;
  /** Each shipped language, named in this catalogue's language (shown by /lang). */
  languageNames: Record<Lang, string>;
}

export interface AddMessages {
  /** Only the configured people add (decision 291, as for Retry and Cancel). */
  notAllowed: string;
  /** The note on the card of a download the message created. */
  added: string;
  /** The note on the card of the active download that already has this torrent. */
  alreadyActive: string;
  invalidMagnet: string;
  invalidTorrent: string;
  invalidName: string;
  /** A document over the bound (bytes; shown in MiB). */
  tooBig: (limitBytes: number) => string;
  fileUnavailable: string;
  /** Our side failed (the store, a bug): nothing known to be added. */
  failed: string;
  /** The magnets past the per-message bound. */
  dropped: (dropped: number, max: number) => string;
}

/** A bound in bytes as MiB, written in the language (10 MiB: `10`; 10.5: `10.5` / `10,5`). */
export function mib(lang: Lang, bytes: number): string {
  return new Intl.NumberFormat(LOCALES[lang], { maximumFractionDigits: 1 }).format(bytes / (1024 * 1024));
}

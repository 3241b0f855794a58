import type { Context } from 'grammy';
import type { Document, Message } from 'grammy/types';
import { DomainError } from '../errors';
import { InvalidMagnetError, InvalidTorrentError } from '../downloads/errors';
import type { Download } from '../downloads/model';
import { type DownloadsDeps, ingest, type IngestRequest } from '../downloads/service';
import { MAX_TORRENT_BYTES } from '../downloads/torrent-file';
import type { Logger } from '../log';
import { InvalidFileNameError } from '../names';
import { TelegramFileError, TelegramFileTooBigError } from './errors';
import { BOT_API_DOWNLOAD_BYTES, fetchDocument, type FileFetchDeps } from './files';
import { type BotLocale, cardText, cardUrl, clip, escapeHtml, fitLines, keyboard, notifiedOf } from './format';
import { findMagnets, hasMagnet, MAX_MAGNETS_PER_MESSAGE } from './magnets';

/**
 * A magnet typed or pasted to the bot (several per message, anywhere in the text or a caption), or a .torrent
 * sent as a document, becomes a download through the same use case as `POST /downloads` (`ingest`: one active
 * download per infohash, 201/200 there, "Added." / "Already being downloaded" here). The answer is the
 * download's card, with its buttons; a message that adds several gets one answer with a part per magnet (one
 * send, whatever the count: Telegram's one-a-second pace per chat; decision 410).
 *
 * Once: the bot's update ledger lets one delivery of the Update run this. A handling that died between a
 * create and the answer is run again by Telegram's re-delivery after its lease, and `ingest` then finds the
 * download it created active: the answer is its card, "already being downloaded" (decision 412).
 */

export interface AddDeps {
  downloads: DownloadsDeps;
  uiBase: string;
  log: Logger;
  files: Omit<FileFetchDeps, 'api'>;
}

/** The smaller of the Bot API's download bound and the project's .torrent bound (decision 401). */
export const TORRENT_DOCUMENT_BYTES = Math.min(BOT_API_DOWNLOAD_BYTES, MAX_TORRENT_BYTES);

const TORRENT_MIME = 'application/x-bittorrent';

/** A document the bot takes as a .torrent: by its name or its type; any other document is not for the bot. */
export function torrentDocument(message: Message | undefined): Document | undefined {
  const doc = message?.document;
  if (!doc || typeof doc.file_id !== 'string') return undefined;
  const byName = typeof doc.file_name === 'string' && /\.torrent$/i.test(doc.file_name);
  const byType = typeof doc.mime_type === 'string' && doc.mime_type.toLowerCase() === TORRENT_MIME;
  return byName || byType ? doc : undefined;
}

/**
 * Whether the message asks to add a download (a magnet in its text or caption, or a .torrent). A command is
 * the command's (`/find magnet:?…` finds): the bot's access checks and its handlers read the same answer.
 */
export function addsSomething(message: Message | undefined): boolean {
  if (!message || /^\/[A-Za-z0-9_]/.test(message.text ?? '')) return false;
  return (
    torrentDocument(message) !== undefined ||
    hasMagnet(message.text ?? message.caption, message.entities ?? message.caption_entities)
  );
}

type Outcome = { download: Download; created: boolean } | { refused: string };

export async function addFromMessage(deps: AddDeps, ctx: Context, locale: BotLocale): Promise<void> {
  const message = ctx.message;
  if (!message || !addsSomething(message)) return;
  const m = locale.messages;
  const log = deps.log.child({ update_id: ctx.update.update_id, chat_id: message.chat.id, user_id: ctx.from?.id });
  const outcomes: Outcome[] = [];

  const doc = torrentDocument(message);
  if (doc) {
    outcomes.push(
      await addOne(deps, log, locale, 'torrent', async () => ({
        torrent: await fetchDocument(
          { ...deps.files, api: ctx.api },
          doc.file_id,
          typeof doc.file_size === 'number' ? doc.file_size : undefined,
          TORRENT_DOCUMENT_BYTES,
        ),
      })),
    );
  }
  const { magnets, dropped } = findMagnets(
    message.text ?? message.caption,
    message.entities ?? message.caption_entities,
  );
  for (const magnet of magnets) outcomes.push(await addOne(deps, log, locale, 'magnet', async () => ({ magnet })));

  const only = outcomes.length === 1 ? outcomes[0] : undefined;
  if (only && 'download' in only && dropped === 0) {
    const d = only.download;
    return void (await ctx.reply(cardText(notifiedOf(d), deps.uiBase, locale, noteOf(only, locale)), {
      parse_mode: 'HTML',
      reply_markup: keyboard(d.id, m),
      link_preview_options: { is_disabled: true },
    }));
  }
  // One refusal is said plainly.
  if (only && 'refused' in only && dropped === 0) return void (await ctx.reply(only.refused));
  const lines = outcomes.flatMap((outcome, i) => {
    const n = outcomes.length > 1 ? `<b>${i + 1}.</b> ` : '';
    if ('refused' in outcome) return [`${n}<i>${escapeHtml(outcome.refused)}</i>`];
    const d = outcome.download;
    return [
      `${n}<a href="${escapeHtml(cardUrl(deps.uiBase, d.id))}">${escapeHtml(clip(d.name))}</a>`,
      `${m.stateLine(d.state)} · ${m.idLine(d.id)}`,
      `<i>${escapeHtml(noteOf(outcome, locale))}</i>`,
    ];
  });
  if (dropped > 0) lines.push(`<i>${escapeHtml(m.add.dropped(dropped, MAX_MAGNETS_PER_MESSAGE))}</i>`);
  await ctx.reply(fitLines(lines, m), { parse_mode: 'HTML', link_preview_options: { is_disabled: true } });
}

const noteOf = (outcome: { created: boolean }, locale: BotLocale) =>
  outcome.created ? locale.messages.add.added : locale.messages.add.alreadyActive;

/** One magnet or file: the download, or why not in the person's words (the technical reason is logged). */
async function addOne(
  deps: AddDeps,
  log: Logger,
  locale: BotLocale,
  source: 'magnet' | 'torrent',
  request: () => Promise<IngestRequest>,
): Promise<Outcome> {
  const m = locale.messages.add;
  try {
    const { created, download } = await ingest(deps.downloads, await request());
    log.info('telegram_download_added', { source, download_id: download.id, created });
    return { download, created };
  } catch (err) {
    const refused =
      err instanceof InvalidMagnetError
        ? m.invalidMagnet
        : err instanceof InvalidTorrentError
          ? m.invalidTorrent
          : err instanceof InvalidFileNameError
            ? m.invalidName
            : err instanceof TelegramFileTooBigError
              ? m.tooBig(err.limit)
              : err instanceof TelegramFileError
                ? m.fileUnavailable
                : m.failed;
    const ours = refused === m.failed && !(err instanceof DomainError);
    (ours ? log.error : log.warn).call(log, 'telegram_add_refused', { source, reason: (err as Error)?.name, err });
    return { refused };
  }
}

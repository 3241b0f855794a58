import type { MessageEntity } from 'grammy/types';

/**
 * The magnets of a message a person typed or pasted (its text, or a document's caption): found anywhere in
 * the text, and in the hidden link of a `text_link` entity. Only found here; lib/downloads parses each one
 * (parseMagnet) exactly as for the API, so nothing in this file decides what a valid magnet is.
 *
 * A candidate runs from `magnet:?` to the first character no link a person pastes carries: whitespace
 * (Unicode's too), `"`, `<`, `>`, a backtick, a control or bidi formatting character, or a lone surrogate (Telegram passes a
 * message's UTF-16 on as it came; a lone half would be written to DynamoDB as U+FFFD, another name). The
 * punctuation a sentence puts after a link (`magnet:?…, and`) is not part of it. Raw non-ASCII stays: people
 * paste `dn=Фильм` unencoded.
 */

/** One message adds this many at most (decision 410): each is a transaction and a torrent client call. */
export const MAX_MAGNETS_PER_MESSAGE = 10;

// No `u` flag: a surrogate pair is matched as its two code units, a lone half not at all.
const CANDIDATE =
  /magnet:\?(?:[!#-;=?-_a-~\u00a1-\u167f\u1681-\u1fff\u2010-\u2027\u2030-\u205e\u2070-\u2fff\u3001-\ud7ff\ue000-\ufefe\uff00-\uffff]|[\ud800-\udbff][\udc00-\udfff])+/gi;
/** What a sentence puts right after a link. */
const TRAILING = /[.,;:!?)\]}'»…]+$/;

export interface FoundMagnets {
  /** In the order they appear (the text's, then hidden links'), each once, at most MAX_MAGNETS_PER_MESSAGE. */
  magnets: string[];
  /** How many more the message had, not read. */
  dropped: number;
}

export function findMagnets(text: string | undefined, entities: readonly MessageEntity[] = []): FoundMagnets {
  const found: string[] = [];
  // A forged Update is shaped by the webhook only where the bot routes on it: here anything may arrive.
  for (const match of (typeof text === 'string' ? text : '').matchAll(CANDIDATE))
    found.push(match[0].replace(TRAILING, ''));
  for (const entity of Array.isArray(entities) ? entities : []) {
    if (entity?.type !== 'text_link' || typeof entity.url !== 'string') continue;
    const [link] = entity.url.match(new RegExp(`^${CANDIDATE.source}$`, 'i')) ?? [];
    if (link) found.push(link);
  }
  const unique = [...new Set(found.filter((m) => m.length > 'magnet:?'.length))];
  return {
    magnets: unique.slice(0, MAX_MAGNETS_PER_MESSAGE),
    dropped: Math.max(0, unique.length - MAX_MAGNETS_PER_MESSAGE),
  };
}

/** Whether the text asks to add anything: the bot's access checks run on this, before any read. */
export function hasMagnet(text: string | undefined, entities: readonly MessageEntity[] = []): boolean {
  return findMagnets(text, entities).magnets.length > 0;
}

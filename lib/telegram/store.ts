import type { Lang } from '../i18n';
import type { EventKind } from './model';

/**
 * The exactly-once record of notifications (claim before send) and the
 * failure store. Every write is conditional on the claim's owner, so a worker
 * whose lease was taken over can never overwrite the new holder's outcome.
 */

export type DeliveryStatus = 'sending' | 'retrying' | 'sent' | 'failed' | 'uncertain';

export interface DeliveryRef {
  eventId: string;
  chatId: number;
  downloadId: string;
  kind: EventKind;
}

export type ClaimResult =
  | { claimed: true; attempts: number }
  /** Someone holds or settled it: `sent`/`failed`/`uncertain` are final; a live `sending`/`retrying` is another worker's. */
  | {
      claimed: false;
      status: DeliveryStatus;
      /** This call found the dead sender and recorded it `uncertain`. */ settledNow?: boolean;
    };

export interface Failure {
  id: string;
  event_id: string;
  chat_id: number;
  download_id: string;
  kind: string;
  reason: string;
  failed_at: string;
  /** An operator's retry (the console) claimed it at this instant: never retried twice. */
  retried_at?: string;
  /** The message the retry sent; absent after a claim when the retry's outcome is unknown. */
  retry_message_id?: number;
}

export interface DeliveryStore {
  /**
   * Claims a delivery for `owner` until `leaseUntil`: new, or `retrying` past its lease (its holder died
   * between attempts: nothing is in flight). A `sending` past its lease died mid-send: it becomes
   * `uncertain` (recorded in the failure store) and is never sent again.
   */
  claim(ref: DeliveryRef, owner: string, now: number, leaseUntil: number): Promise<ClaimResult>;
  /** Before each attempt: from here until markSent/markRetrying a crash leaves the outcome unknown. */
  markSending(ref: DeliveryRef, owner: string, leaseUntil: number): Promise<void>;
  /** The attempt got a definite refusal (or no connection): nothing was sent, another attempt may follow. */
  markRetrying(ref: DeliveryRef, owner: string, attempts: number, error: string, leaseUntil: number): Promise<void>;
  markSent(ref: DeliveryRef, owner: string, messageId: number): Promise<void>;
  /**
   * Not sent in this invocation (its time ran out while the chat was paced or paused): the claim is
   * given back at once, nothing was in flight, so the stream's next delivery of the record sends it.
   */
  release(ref: DeliveryRef, owner: string): Promise<void>;
  /** Past its bound or refused for good: final, with a failure item. */
  markFailed(ref: DeliveryRef, owner: string, reason: string): Promise<void>;
  /** The send may have been applied, its answer lost: final (never sent again), with a failure item. */
  markUncertain(ref: DeliveryRef, owner: string, reason: string): Promise<void>;
  /** A record that is no notification at all (unreadable): a failure item only. */
  recordFailure(failure: Omit<Failure, 'id' | 'failed_at'>): Promise<void>;
  listFailures(limit: number): Promise<Failure[]>;
  /**
   * Claims a failure for ONE retry (a conditional write): the failure, or `taken` when it was
   * retried already, `missing` when there is none.
   */
  claimRetry(id: string, now: number): Promise<Failure | 'taken' | 'missing'>;
  /** The retry was sent: its message id. */
  retrySent(id: string, messageId: number): Promise<void>;
  /** The retry's send was refused (nothing went out): the claim is given back for another try. */
  releaseRetry(id: string, claimedAt: string): Promise<void>;
}

/**
 * Updates handled by the webhook, by `update_id`: Telegram delivers an Update
 * again when the bot was slow to answer, and a delivery must not act on what
 * another has handled. A handling that never finished (the invocation timed
 * out, the store paused) must not make the redelivery skip it: the claim is a
 * lease, and only a finished handling is `done` (decision 356).
 */
export interface UpdateLedger {
  /**
   * Claims `updateId` until `leaseUntil` (epoch ms): `first` (handle it), `done` (handled: skip), `busy`
   * (another delivery holds a lease not yet over). A claim whose lease is over, or that was abandoned, is
   * taken again.
   */
  begin(updateId: number, now: number, leaseUntil: number): Promise<UpdateClaim>;
  /** The handling finished: every later delivery is skipped (kept for `UPDATE_TTL_S`). */
  finish(updateId: number, now: number): Promise<void>;
  /** The handling failed: the next delivery handles it again. */
  abandon(updateId: number): Promise<void>;
}

export type UpdateClaim = 'first' | 'done' | 'busy';

/** Telegram keeps an undelivered Update for 24 hours; the record outlives that. */
export const UPDATE_TTL_S = 2 * 24 * 3600;

/** Groups that became supergroups (400 `migrate_to_chat_id`): the old id and the one it moved to. */
export interface ChatMoves {
  recordMove(from: number, to: number, now: number): Promise<void>;
  /** Every recorded move, old id → new id. */
  moves(): Promise<Map<number, number>>;
}

/** Where a configured chat lives now (a move may be followed by another; a loop stops). */
export function resolveChat(moves: ReadonlyMap<number, number>, chatId: number): number {
  let current = chatId;
  for (let hops = 0; hops < 8 && moves.has(current); hops += 1) current = moves.get(current)!;
  return current;
}

/** The configured chats and every chat one of them moved to: who is served and notified. */
export function servedChats(configured: readonly number[], moves: ReadonlyMap<number, number>): Set<number> {
  const served = new Set(configured);
  for (const chat of configured) {
    let current = chat;
    for (let hops = 0; hops < 8 && moves.has(current); hops += 1) {
      current = moves.get(current)!;
      served.add(current);
    }
  }
  return served;
}

/** Each chat's own language, chosen with /lang (decision 340); a chat without one speaks the default. */
export interface ChatLanguages {
  /** One chat's choice (a command or a press in it). */
  languageOf(chatId: number): Promise<Lang | undefined>;
  /** Every chat's choice, chat id → language (the notifier, once per batch). */
  languages(): Promise<Map<number, Lang>>;
  setLanguage(chatId: number, lang: Lang, by: number | undefined, now: number): Promise<void>;
}

/**
 * A download's status message in one configured chat (decision 456): the one message edited in place as the
 * download moves. Kept durably so a restarted notifier edits the same message instead of sending another.
 */
export interface StatusMessage {
  downloadId: string;
  /** The configured chat (the key), and the chat the message lives in (a group that moved: the old one). */
  chatId: number;
  target?: number;
  messageId?: number;
  /** The stream SequenceNumber of the change it shows: an older change never overwrites it. */
  sequence?: string;
  /** How it opened: its title. */
  title: 'created' | 'adopted' | 'status';
  /** A send under way (no message id yet): who, and until when. */
  owner?: string;
  leaseUntil?: number;
}

export interface StatusStore {
  status(downloadId: string, chatId: number): Promise<StatusMessage | undefined>;
  /**
   * Claims the opening send of a status message for `owner` (none recorded, or a claim past its lease whose
   * holder died: at least once in that window, decision 456). False: another holds it, or it has a message.
   */
  claimOpening(downloadId: string, chatId: number, owner: string, now: number, leaseUntil: number): Promise<boolean>;
  /**
   * The message that shows the download now: recorded when there is none yet, or when it replaces `replaces`
   * (Telegram lost the old one); false when another message was recorded meanwhile (that one stays).
   */
  opened(
    m: Required<Pick<StatusMessage, 'downloadId' | 'chatId' | 'target' | 'messageId' | 'sequence' | 'title'>>,
    replaces?: number,
  ): Promise<boolean>;
  /** The message shows the change at `sequence`; only ever forward (false: a newer one is shown already). */
  shown(downloadId: string, chatId: number, messageId: number, sequence: string): Promise<boolean>;
}

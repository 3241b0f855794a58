import { parseId } from '../ident';
import { FieldSpec, pickFields, readItem } from '../util/item';
import type { DeliveryRef, Failure } from './store';

/**
 * Key design of the telegram table (one place), and its items: named fields,
 * keys written last so no field can choose them.
 *
 * item        PK                 SK                attributes
 * delivery    EV#<eventId>       CHAT#<chatId>     status, owner, lease_until, attempts, message_id, download_id, kind
 * failure     FAIL               <ulid>            event_id, chat_id, download_id, kind, reason, failed_at
 * update      UPD#<update_id>    UPD               status (handling|done), lease_until, seen_at, expires_at (TTL, epoch seconds)
 * chat move   CHATMOVE           <old chat id>     to, moved_at
 * language    CHATLANG           <chat id>         lang, set_at, set_by (a chat's /lang choice)
 * status      TGSTATUS#<dl id>   CHAT#<chatId>     message_id, target, sequence (40 digits), title, owner, lease_until
 *
 * Access patterns:
 * - claim / settle one notification     GetItem/PutItem/UpdateItem EV#<eventId>/CHAT#<chatId>
 * - the failure store, newest first      Query PK=FAIL descending (ULIDs sort by time)
 * - an Update's handling                 PutItem UPD#<update_id> if absent or its lease is over; GetItem
 *                                        when refused (done or busy); UpdateItem done / abandoned
 * - every chat move (a handful)          Query PK=CHATMOVE
 * - one chat's language (a command)      GetItem CHATLANG/<chat id>
 * - every chat's language (a batch)      Query PK=CHATLANG (the served chats: a handful)
 * - a download's status message          GetItem TGSTATUS#<dl id>/CHAT#<chatId>; conditional Put (opening)
 *   in one chat                          and UpdateItem (the message, the sequence shown: only forward)
 *
 * The delivery item is the exactly-once record: its conditional claim decides
 * who may send; `sent` records what was sent (message id).
 */

export const FAILURE_PARTITION = 'FAIL';
export const MOVE_PARTITION = 'CHATMOVE';
export const LANGUAGE_PARTITION = 'CHATLANG';

export const deliveryKey = (eventId: string, chatId: number) => ({ PK: `EV#${eventId}`, SK: `CHAT#${chatId}` });
export const failureKey = (id: string) => ({ PK: FAILURE_PARTITION, SK: id });
export const updateKey = (updateId: number) => ({ PK: `UPD#${safeInt(updateId)}`, SK: 'UPD' });
export const moveKey = (from: number) => ({ PK: MOVE_PARTITION, SK: String(safeInt(from)) });
export const languageKey = (chatId: number) => ({ PK: LANGUAGE_PARTITION, SK: String(safeInt(chatId)) });

/** The download id is parsed (a ULID, lower case) before it is a key part. */
export const statusKey = (downloadId: string, chatId: number) => ({
  PK: `TGSTATUS#${parseId(downloadId)}`,
  SK: `CHAT#${safeInt(chatId)}`,
});

/** Stream SequenceNumbers are decimal strings of up to 40 digits: padded, they compare as strings. */
export function sequenceKey(sequence: string): string {
  if (!/^\d{1,40}$/.test(sequence)) throw new Error('not a stream sequence number');
  return sequence.padStart(40, '0');
}

/** Ids from Telegram become key parts only as integers: nothing else can shape a key. */
function safeInt(n: number): number {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer id: ${String(n)}`);
  return n;
}

/** A delivery as its first claim writes it: `retrying` with no attempt made yet. */
export function deliveryItem(ref: DeliveryRef, owner: string, leaseUntil: number, claimedAt: string) {
  return {
    entity: 'delivery',
    status: 'retrying',
    owner,
    lease_until: leaseUntil,
    attempts: 0,
    download_id: ref.downloadId,
    kind: ref.kind,
    chat_id: ref.chatId,
    claimed_at: claimedAt,
    ...deliveryKey(ref.eventId, ref.chatId),
  };
}

/** The fields of a failure: what its item is written from and read back through. */
const FAILURE_FIELDS: FieldSpec<Failure> = {
  id: 'string',
  event_id: 'string',
  chat_id: 'number',
  download_id: 'string',
  kind: 'string',
  reason: 'string',
  failed_at: 'string',
  retried_at: 'string?',
  retry_message_id: 'number?',
};

export function failureToItem(f: Failure): Record<string, unknown> {
  return { entity: 'failure', ...pickFields(FAILURE_FIELDS, f), ...failureKey(f.id) };
}

export function failureFromItem(item: Record<string, unknown>): Failure {
  return readItem(FAILURE_FIELDS, item, 'failure');
}

/**
 * Key design of the telegram table (one place).
 *
 * item        PK                 SK                attributes
 * delivery    EV#<eventId>       CHAT#<chatId>     status, owner, lease_until, attempts, message_id, download_id, kind
 * failure     FAIL               <ulid>            event_id, chat_id, download_id, kind, reason, failed_at
 *
 * Access patterns:
 * - claim / settle one notification     GetItem/PutItem/UpdateItem EV#<eventId>/CHAT#<chatId>
 * - the failure store, newest first      Query PK=FAIL descending (ULIDs sort by time)
 *
 * The delivery item is the exactly-once record: its conditional claim decides
 * who may send; `sent` records what was sent (message id).
 */

export const FAILURE_PARTITION = 'FAIL';

export const deliveryKey = (eventId: string, chatId: number) => ({ PK: `EV#${eventId}`, SK: `CHAT#${chatId}` });
export const failureKey = (id: string) => ({ PK: FAILURE_PARTITION, SK: id });

/**
 * Key design of the ops tools' own items (the ONLY place that writes them).
 * Replay markers live in the downloads table, as the idempotency records do
 * (a shared mechanism's records in the table that has a TTL attribute;
 * docs/decisions.md, 281), and `expires_at` removes them:
 *
 * item           PK        SK
 * replay marker  REPLAY    <SQS message id of the failure record>
 *
 * Access patterns: one marker by message id (GetItem; the conditional put that
 * claims a replay); every marker still kept (Query PK = REPLAY): what was
 * replayed, by whom, when.
 */

export const REPLAY_PARTITION = 'REPLAY';

/** SQS message ids are UUIDs; anything else never becomes a key. */
const MESSAGE_ID = /^[A-Za-z0-9-]{1,100}$/;

export function replayMarkerKey(messageId: string): { PK: string; SK: string } {
  if (!MESSAGE_ID.test(messageId)) throw new Error(`not an SQS message id: ${JSON.stringify(messageId.slice(0, 120))}`);
  return { PK: REPLAY_PARTITION, SK: messageId };
}

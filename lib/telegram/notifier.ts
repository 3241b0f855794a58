import { randomUUID } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { Clock, systemClock } from '../clock';
import type { Logger } from '../log';
import type { TelegramSender } from './api';
import { TelegramApiError, TelegramNetworkError } from './errors';
import { keyboard, notificationText } from './format';
import { classify, DownloadEvent, MalformedStreamRecordError, StreamRecord } from './model';
import type { DeliveryRef, DeliveryStore } from './store';

/**
 * The stream consumer's policy: each record of the downloads table's stream
 * that is an event becomes one message per configured chat, exactly once.
 *
 * - Exactly once: a conditional claim (lib/telegram/store.ts) before the
 *   send; `sent` (with the message id) after. A redelivered record finds the
 *   claim and sends nothing. A crash between the send and the record leaves a
 *   `sending` claim; once its lease is over it becomes `uncertain` and is
 *   NOT resent (Telegram has no idempotency key: at most once in that window).
 * - Order: the records of one download go to one chat one after another, in
 *   stream order; different downloads and chats run side by side, so a chat
 *   that answers 429 delays only its own queue.
 * - Bounded: 429 (after its retry_after), 5xx and no answer are retried until
 *   `attempts` or `boundMs`; then the delivery is `failed` with an item in
 *   the failure store and an error log. A record we cannot read is logged and
 *   stored the same way. Nothing here throws: one record never stops a batch.
 */

export interface NotifierDeps {
  deliveries: DeliveryStore;
  sender: TelegramSender;
  chats: number[];
  uiBase: string;
  log: Logger;
  policy: DeliveryPolicy;
  now?: Clock;
  sleep?: (ms: number) => Promise<void>;
  /** Test seam: runs between a successful send and its record (where a crash is injected). */
  afterSend?: (ref: DeliveryRef, messageId: number) => Promise<void>;
}

export interface DeliveryPolicy {
  attempts: number;
  boundMs: number;
  /** How long a claim stays another worker's: longer than one send (its timeout) plus the record. */
  leaseMs: number;
  backoffMs: number;
  /** Queues (download × chat) delivered at once. */
  concurrency: number;
}

export const DEFAULT_POLICY: DeliveryPolicy = {
  attempts: 6,
  boundMs: 45_000,
  leaseMs: 15_000,
  backoffMs: 250,
  concurrency: 8,
};

export type Outcome = 'sent' | 'duplicate' | 'failed' | 'error';

export interface BatchSummary {
  records: number;
  events: number;
  outcomes: Record<Outcome, number>;
}

export async function notifyRecords(deps: NotifierDeps, records: StreamRecord[]): Promise<BatchSummary> {
  const summary: BatchSummary = {
    records: records.length,
    events: 0,
    outcomes: { sent: 0, duplicate: 0, failed: 0, error: 0 },
  };
  const queues = new Map<string, Array<() => Promise<Outcome>>>();
  for (const record of records) {
    let event: DownloadEvent | undefined;
    try {
      event = classify(record);
    } catch (err) {
      await poisonRecord(deps, record, err);
      summary.outcomes.error += 1;
      continue;
    }
    if (!event) continue;
    summary.events += 1;
    for (const chatId of deps.chats) {
      const key = `${event.download.id}|${chatId}`;
      const queue = queues.get(key) ?? [];
      const e = event;
      queue.push(() => deliver(deps, e, chatId));
      queues.set(key, queue);
    }
  }
  await pool([...queues.values()], deps.policy.concurrency, async (queue) => {
    for (const job of queue) summary.outcomes[await job()] += 1;
  });
  return summary;
}

async function deliver(deps: NotifierDeps, event: DownloadEvent, chatId: number): Promise<Outcome> {
  const now = deps.now ?? systemClock;
  const sleep = deps.sleep ?? ((ms: number) => sleepFor(ms));
  const ref: DeliveryRef = { eventId: event.eventId, chatId, downloadId: event.download.id, kind: event.kind };
  const log = deps.log.child({ download_id: ref.downloadId, event_id: ref.eventId, chat_id: chatId, kind: ref.kind });
  const { policy } = deps;
  const owner = randomUUID();
  try {
    const began = now();
    const claim = await deps.deliveries.claim(ref, owner, began, began + policy.leaseMs);
    if (!claim.claimed) {
      if (claim.settledNow) {
        log.error('notification_uncertain', {
          reason: 'the sender crashed between sending and recording; not resent (at most once)',
        });
        return 'failed';
      }
      log.info('notification_skipped', { status: claim.status });
      return 'duplicate';
    }
    const text = notificationText(event.kind, event.download, deps.uiBase);
    for (let attempt = 1; ; attempt += 1) {
      await deps.deliveries.markSending(ref, owner, now() + policy.leaseMs);
      let messageId: number;
      try {
        messageId = await deps.sender.sendMessage(chatId, text, keyboard(event.download.id));
      } catch (err) {
        const retryable = (err instanceof TelegramApiError || err instanceof TelegramNetworkError) && err.retryable;
        const wait =
          err instanceof TelegramApiError && err.retryAfterS !== undefined
            ? err.retryAfterS * 1000
            : policy.backoffMs * 2 ** (attempt - 1);
        const reason = err instanceof Error ? err.message : String(err);
        if (!retryable || attempt >= policy.attempts || now() - began + wait > policy.boundMs) {
          await deps.deliveries.markFailed(
            ref,
            owner,
            `${retryable ? `gave up after ${attempt} attempts` : 'refused'}: ${reason}`,
          );
          log.error('notification_failed', { attempts: attempt, err });
          return 'failed';
        }
        // The lease covers the wait: until it ends nobody takes over a delivery that is only pausing.
        await deps.deliveries.markRetrying(ref, owner, attempt, reason, now() + wait + policy.leaseMs);
        log.warn('notification_retry', { attempt, wait_ms: wait, err });
        await sleep(wait);
        continue;
      }
      await deps.afterSend?.(ref, messageId);
      await deps.deliveries.markSent(ref, owner, messageId);
      log.info('notification_sent', { message_id: messageId, attempts: attempt });
      return 'sent';
    }
  } catch (err) {
    // Storage trouble or a lost claim: logged, never thrown; the claim's lease settles it on redelivery.
    log.error('notification_error', { err });
    return 'error';
  }
}

async function poisonRecord(deps: NotifierDeps, record: StreamRecord, err: unknown): Promise<void> {
  const eventId = typeof record.eventID === 'string' ? record.eventID.slice(0, 128) : 'unknown';
  deps.log.error('stream_record_refused', { event_id: eventId, err });
  const reason =
    err instanceof MalformedStreamRecordError
      ? err.message
      : `stream record refused: ${err instanceof Error ? err.name : 'unreadable'}`;
  await deps.deliveries
    .recordFailure({ event_id: eventId, chat_id: 0, download_id: '', kind: 'unreadable', reason })
    .catch((storeErr) => deps.log.error('failure_store_write_failed', { event_id: eventId, err: storeErr }));
}

async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]);
  });
  await Promise.all(runners);
}
